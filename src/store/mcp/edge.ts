/**
 * The HTTP edge of the MCP endpoint: what is judged before a request reaches the MCP
 * protocol or the store. An omitted Origin is admitted, a present one must be one of
 * `allowed_origins` exactly (scheme, host and port, as the canonical strings of the policy);
 * the request must carry exactly one well-formed `Authorization: Bearer` (none, several or a
 * malformed one is 401 with the RFC 6750 / RFC 9728 challenge); the body is read within
 * `body_timeout_ms` and at most `MCP_REQUEST_BODY_MAX_BYTES`. The header deadline is the
 * listener's own (see loopback-http.ts).
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { SkeinError } from "../../common/errors.ts";
import { readBoundedBody } from "../../common/http-body.ts";
import { decodeValue } from "../codec/json-value.ts";
import { PASS_MAX_BYTES } from "../idp/passes.ts";
import { mcpRefusal } from "./refusals.ts";

/**
 * Largest request body: one JSON-RPC message. The SDK's own transport uses the same 4 MiB
 * bound when it reads a body itself; a document larger than this is written over the socket.
 */
export const MCP_REQUEST_BODY_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Most bytes of a too-large body read and dropped before the 413 (see readJsonBody): four
 * times the bound covers a client that sent a few documents too many; a larger body is cut.
 */
export const MCP_DISCARD_BODY_MAX_BYTES = 16 * 1024 * 1024;

/** RFC 6750 token68: the only shape a bearer credential has. */
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/** True when the request may proceed: no Origin, or one the policy allows exactly. */
export function originAllowed(request: IncomingMessage, allowed: ReadonlySet<string>): boolean {
  const origins = request.headersDistinct.origin;
  if (origins === undefined) return true;
  // Two Origin headers are not one origin: refused like an unknown one.
  return origins.length === 1 && allowed.has(origins[0]!);
}

/**
 * The bearer of the request, or undefined when it has none, several or a malformed one.
 * `headersDistinct` keeps every Authorization header: Node's `headers` keeps the first only.
 */
export function bearerOf(request: IncomingMessage): string | undefined {
  const values = request.headersDistinct.authorization;
  if (values === undefined || values.length !== 1) return undefined;
  const match = /^Bearer ([^ ]+)$/i.exec(values[0]!);
  const token = match?.[1];
  if (token === undefined || token.length > PASS_MAX_BYTES || !TOKEN68.test(token)) {
    return undefined;
  }
  return token;
}

/** The `WWW-Authenticate` value of a 401: `Bearer`, with the metadata URL when configured. */
export function challenge(resourceMetadataUrl: string | null, invalidToken = false): string {
  const params: string[] = [];
  if (resourceMetadataUrl !== null) params.push(`resource_metadata="${resourceMetadataUrl}"`);
  if (invalidToken) params.push('error="invalid_token"');
  return params.length === 0 ? "Bearer" : `Bearer ${params.join(", ")}`;
}

/** Answers a refusal as `{"error": {code, message}}` with its status. */
export function sendRefusal(
  response: ServerResponse,
  error: SkeinError,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const body = JSON.stringify({ error: error.toJSON() });
  response.writeHead(error.status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    ...headers,
  });
  response.end(body);
}

/**
 * Reads the body within `timeoutMs` of the call and at most `maxBytes`, then parses it as
 * JSON (integers beyond 2^53 stay exact, as on the socket). Throws a SkeinError
 * (`body_timeout`, `body_too_large`, `body_not_json`). A body over the bound is read to its
 * end and dropped (up to MCP_DISCARD_BODY_MAX_BYTES) before the 413, so a client that sent it
 * all at once reads the answer instead of a reset.
 */
export async function readJsonBody(
  request: IncomingMessage,
  timeoutMs: number,
  maxBytes: number = MCP_REQUEST_BODY_MAX_BYTES,
): Promise<unknown> {
  const read = await readBoundedBody(request, {
    maxBytes,
    discardBytes: MCP_DISCARD_BODY_MAX_BYTES,
    timeoutMs,
  });
  switch (read.kind) {
    case "body":
      try {
        return decodeValue(read.bytes.toString("utf8"));
      } catch {
        throw mcpRefusal("body_not_json");
      }
    case "too_large":
      throw mcpRefusal("body_too_large");
    case "timeout":
      throw mcpRefusal(read.tooLarge ? "body_too_large" : "body_timeout");
    case "cut_off":
      throw mcpRefusal("body_timeout", "the request body was cut off");
  }
}
