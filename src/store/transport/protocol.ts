/**
 * The messages on the store socket, as tagged values with a request id. A client sends
 * `{id, verb, args}`; the server answers each with `{id, ok: true, result}` or
 * `{id, ok: false, error: {code, message}}`. The first request must be `hello`, which
 * negotiates max_frame (the smaller of the two sides' limits) and names the client. A
 * refusal not tied to a request (admission, a broken frame) uses id 0 and is followed by
 * the server closing the connection.
 */

import { boolean, integer, object, optional, string, u32 } from "../../common/decode/index.ts";
import type { ErrorShape } from "../../common/errors.ts";

export interface Request {
  readonly id: number;
  readonly verb: string;
  readonly args: unknown;
}

export type Response =
  | { readonly id: number; readonly ok: true; readonly result: unknown }
  | { readonly id: number; readonly ok: false; readonly error: ErrorShape };

export const requestDecoder = object({
  id: integer("u64", { max: Number.MAX_SAFE_INTEGER }),
  verb: string({ minBytes: 1, maxBytes: 64 }),
  args: optional({ expected: "any", run: (value) => value }),
});

export const helloDecoder = object({
  max_frame: u32({ min: 1 }),
  client: optional(string({ minBytes: 1, maxBytes: 128 })),
  /** With idp: the caller's access token from the issuer (ignored without idp). */
  pass: optional(string({ maxBytes: 65_536 })),
  /** Asks for `verbs` in the answer (off by default: it would not fit a tiny max_frame). */
  verbs: optional(boolean()),
});

export interface HelloResult {
  readonly server: "skein-store";
  readonly version: string;
  readonly max_frame: number;
  readonly shards: number;
  /**
   * The verbs this store serves, so a client (the MCP server's tool list) offers only what
   * the store can do; a verb a deployment has not enabled is left out. Only when hello
   * asked for it.
   */
  readonly verbs?: readonly string[];
}
