/**
 * `skein-store call --socket PATH VERB [JSON]`: sends one verb with its JSON arguments to a
 * running store and prints the result as JSON. A refusal prints `CODE: message` on stderr
 * and exits 1, so scripts can switch on the code. A store with `idp` takes the caller's pass
 * from `--pass-file FILE` (one line) or else `SKEIN_STORE_PASS`; it is never printed.
 */

import { resolve } from "node:path";
import { type Command, type Io, parseOptions, UsageError } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { StoreClient } from "../client/client.ts";
import { decodeValue } from "../codec/json-value.ts";
import { readCredentialFile } from "../config/files.ts";

const socketOption = {
  socket: { type: "string" },
  "timeout-ms": { type: "string" },
  "pass-file": { type: "string" },
} as const;

/** The environment variable a pass is taken from when no `--pass-file` is given. */
export const PASS_ENV = "SKEIN_STORE_PASS";

/** Connects, calls one verb, prints the answer; the shared body of every client command. */
export async function callVerb(
  io: Io,
  values: {
    socket?: string | undefined;
    "timeout-ms"?: string | undefined;
    "pass-file"?: string | undefined;
  },
  verb: string,
  args: object,
): Promise<number> {
  if (values.socket === undefined) throw new UsageError("--socket PATH is required");
  const timeoutMs = values["timeout-ms"] === undefined ? 30_000 : Number(values["timeout-ms"]);
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) {
    throw new UsageError("--timeout-ms must be a positive whole number");
  }
  let client: StoreClient | undefined;
  try {
    const pass = await passOf(values["pass-file"]);
    client = await StoreClient.connect(values.socket, {
      client: "skein-store-cli",
      timeoutMs,
      ...(pass === undefined ? {} : { pass }),
    });
    const result = await client.call(verb, args);
    io.out(formatJson(result));
    return 0;
  } catch (error) {
    if (error instanceof SkeinError) io.err(`skein-store: ${error.code}: ${error.message}`);
    else
      io.err(
        `skein-store: cannot reach the store at ${values.socket}: ${(error as Error).message}`,
      );
    return 1;
  } finally {
    await client?.close();
  }
}

/** The pass from `--pass-file` (read by the credential-file rules), else from the environment. */
async function passOf(file: string | undefined): Promise<string | undefined> {
  if (file !== undefined) return readCredentialFile("--pass-file", resolve(file));
  const env = process.env[PASS_ENV];
  return env === undefined || env === "" ? undefined : env;
}

export function parseJsonArgument(text: string, what: string): unknown {
  try {
    // Integers beyond 2^53 stay exact (bigints), as values read from the store do.
    return decodeValue(text);
  } catch {
    throw new UsageError(`${what} is not valid JSON`);
  }
}

/** JSON of an answer; integers beyond 2^53 (bigints) print as their exact digits. */
function formatJson(value: unknown): string {
  const json = JSON as typeof JSON & { rawJSON(text: string): unknown };
  return JSON.stringify(
    value,
    (_key, item: unknown) => (typeof item === "bigint" ? json.rawJSON(item.toString()) : item),
    2,
  );
}

export const callCommand: Command = {
  name: "call",
  summary: "send one verb to a running store and print the result as JSON",
  help: "--socket PATH VERB [JSON] [--timeout-ms MS] [--pass-file FILE]\n\nVERB is a store verb (document.get, changes.list, …); JSON its arguments object.\nWith idp, the pass comes from --pass-file or SKEIN_STORE_PASS.",
  async run(args, io) {
    const { values, positionals } = parseOptions(args, socketOption, { min: 1, max: 2 });
    const body = positionals[1] === undefined ? {} : parseJsonArgument(positionals[1], "JSON");
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new UsageError("JSON must be an object of arguments");
    }
    return callVerb(io, values, positionals[0]!, body);
  },
};

export { socketOption };
