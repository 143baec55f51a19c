/**
 * How refusals leave the HTTP API: every error becomes `{"error":{"code","message"}}` with
 * the status of its code in the catalogue (src/workflow/errors.ts). Decode refusals keep
 * their field code and path; Fastify's own refusals (body limit, content type) are mapped
 * to catalogue codes; anything else is a 500 `internal` whose details go to the log only.
 * `rawRefusal` writes the same body as a whole HTTP response, for sockets that no reply
 * object owns (parser refusals, refused WebSocket upgrades).
 */

import { STATUS_CODES } from "node:http";
import type { FastifyError, FastifyInstance } from "fastify";
import { SkeinError } from "../../common/errors.ts";
import { workflowError } from "../errors.ts";

const FASTIFY_CODES: Readonly<Record<string, () => SkeinError>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () =>
    workflowError("body_too_large", "request body is larger than http.max_body_bytes"),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    workflowError("unsupported_media_type", "request bodies must be application/json"),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    workflowError("malformed_json", "request body is empty; expected a JSON value"),
};

export function toSkeinError(error: unknown): SkeinError {
  if (error instanceof SkeinError) return error;
  const fastify = error as Partial<FastifyError>;
  const mapped = fastify.code === undefined ? undefined : FASTIFY_CODES[fastify.code];
  if (mapped !== undefined) return mapped();
  const status = fastify.statusCode ?? 500;
  if (status >= 400 && status < 500) return workflowError("bad_request", String(fastify.message));
  return workflowError("internal", "internal error; see the server log", error);
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const refusal = toSkeinError(error);
    if (refusal.status >= 500) request.log.error({ err: error }, "request failed");
    reply.status(refusal.status).send({ error: refusal.toJSON() });
  });
  app.setNotFoundHandler((request, reply) => {
    const refusal = workflowError("route_not_found", `no route ${request.method} ${request.url}`);
    reply.status(refusal.status).send({ error: refusal.toJSON() });
  });
}

/** A whole HTTP/1.1 response carrying a refusal, for sockets no reply object owns. */
export function rawRefusal(refusal: SkeinError): string {
  const body = JSON.stringify({ error: refusal.toJSON() });
  return [
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ""}`,
    "content-type: application/json; charset=utf-8",
    `content-length: ${Buffer.byteLength(body)}`,
    "connection: close",
    "",
    body,
  ].join("\r\n");
}
