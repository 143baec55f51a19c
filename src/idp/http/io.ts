/**
 * Request and response plumbing for skein-idp's own endpoints (AuthZEN, placement, the login
 * page): bodies read with a byte bound (the declared length is checked first, then the bytes
 * as they arrive), JSON answers, and errors as `{"error":{"code","message"}}` with the
 * catalogue's status. Messages come from the catalogue or the decoder (field paths and
 * rules), never from request contents such as tokens or passwords.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { SkeinError } from "../../common/errors.ts";
import { readBoundedBody } from "../../common/http-body.ts";
import { MAX_DISCARD_BYTES } from "../bounds.ts";
import { idpError } from "../errors.ts";

/**
 * Reads a body of at most `maxBytes`. A larger one is refused with `body_too_large`, but
 * only after it has been read to its end and dropped (nothing kept), so the client sees the
 * 413 instead of a reset; past MAX_DISCARD_BYTES the connection is closed instead.
 */
export async function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const read = await readBoundedBody(request, { maxBytes, discardBytes: MAX_DISCARD_BYTES });
  if (read.kind === "body") return read.bytes;
  throw idpError("body_too_large", `the body must be at most ${maxBytes} bytes`);
}

export function isJson(request: IncomingMessage): boolean {
  const type = request.headers["content-type"] ?? "";
  return /^application\/json\s*(;|$)/i.test(type);
}

export function sendJson(response: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  response.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  response.end(body);
}

export function sendError(response: ServerResponse, error: unknown): void {
  const coded =
    error instanceof SkeinError && error.status < 500 ? error : idpError("internal_error");
  const headers: Record<string, string> = {};
  if (coded.status === 401) headers["www-authenticate"] = 'Bearer realm="skein-idp"';
  const body = JSON.stringify({ error: { code: coded.code, message: coded.message } });
  response.writeHead(coded.status, {
    ...headers,
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  response.end(body);
}
