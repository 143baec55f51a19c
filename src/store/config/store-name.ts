/**
 * The store name: 1 to 128 UTF-8 bytes, without `/`, the backslash or NUL, and not `.` or
 * `..`, so it can name a socket and a lock file in the runtime directory. The same rule
 * applies to a configured name and to the default taken from the data directory's basename;
 * every breach is `invalid_store_name`.
 */

import { type Decoder, describeValue, refuse, withCode } from "../../common/decode/index.ts";
import { STORE_NAME_MAX_BYTES } from "./limits.ts";

export const INVALID_STORE_NAME = "invalid_store_name";

/** The reason `name` is not a store name, or undefined when it is one. */
export function storeNameProblem(name: string): string | undefined {
  const bytes = Buffer.byteLength(name, "utf8");
  if (bytes < 1 || bytes > STORE_NAME_MAX_BYTES) {
    return `must be 1 to ${STORE_NAME_MAX_BYTES} UTF-8 bytes, found ${bytes}`;
  }
  if (name.includes("/")) return "must not contain /";
  if (name.includes("\\")) return "must not contain a backslash";
  if (name.includes("\0")) return "must not contain NUL";
  if (name === "." || name === "..") return `must not be ${name}`;
  return undefined;
}

export const storeName: Decoder<string> = withCode(
  {
    expected: "store name string",
    run(value, path) {
      if (typeof value !== "string") {
        if (value === null) refuse("null", path, "null is not accepted; expected string");
        refuse("type", path, `expected store name string, found ${describeValue(value)}`);
      }
      const problem = storeNameProblem(value);
      if (problem !== undefined) refuse("shape", path, problem);
      return value;
    },
  },
  INVALID_STORE_NAME,
);
