/**
 * The workflow server's error catalogue: every refusal the server can give, declared once with
 * its stable snake_case code and its HTTP status. Route handlers, the namespace registry, the
 * auth layer and start-up checks raise these through `workflowError`, so a code can never
 * drift from its status, and docs/http-api.md lists exactly these codes (a test checks it).
 * Refusals of decoded input are DecodeErrors from the decoding core (status 400) and carry
 * their own field codes.
 */

import { SkeinError } from "../common/errors.ts";

export const ERRORS = {
  /** The request carries no bearer, or one that is not a valid token of this server. */
  unauthenticated: 401,
  /** The bearer is valid but its grants do not cover what was asked. */
  forbidden: 403,
  /** The body is not JSON (syntax error, empty body). */
  malformed_json: 400,
  /** The body nests arrays and objects deeper than MAX_JSON_DEPTH (512). */
  json_too_deep: 400,
  /** The body's content type is not application/json. */
  unsupported_media_type: 415,
  /** The body is larger than `http.max_body_bytes`. */
  body_too_large: 413,
  /** `POST /namespaces` with a name that is empty after trimming (or over 255 bytes). */
  invalid_namespace_name: 400,
  /** A request names no namespace and `namespaces.default` is not set. */
  namespace_required: 400,
  /** Work in an absent namespace while `namespaces.auto_create = "closed"`. */
  namespace_not_found: 404,
  /** Worker deployment endpoints while `deployments.enabled` is false. */
  deployments_disabled: 403,
  /** A deployment name that is not stored (GET, DELETE, POST desired-state). */
  deployment_not_found: 404,
  /** A deployment name beginning `auto/` (reserved). */
  reserved_deployment_name: 400,
  /** A deployment whose `artifact.type` is not `builtin`. */
  unsupported_artifact: 400,
  /** A deployment whose verb, worker document, queue or namespace does not agree. */
  invalid_deployment: 400,
  /** A deployment's `--token-file` is the server's own (its data dir, signing key, admin token). */
  token_file_refused: 400,
  /** The stored row of this deployment cannot be decoded; PUT replaces it, DELETE removes it. */
  deployment_undecodable: 409,
  /** A supervised worker could not be stopped (a PUT or desired-state change needed it). */
  stop_failed: 500,
  /** A workflow definition document is refused; the message names the step and field. */
  invalid_definition: 400,
  /** No definition of that name or version is registered in the namespace. */
  definition_not_found: 404,
  /** No run of that workflow id (and run id) in the namespace. */
  run_not_found: 404,
  /** A `list` cursor that this server did not hand out. */
  invalid_cursor: 400,
  /** The engine stopped (the server is shutting down); retry against the restarted server. */
  engine_stopped: 503,
  /** The URL has an invalid percent-escape (`%ZZ`). */
  malformed_url: 400,
  /** A path segment is longer than any name the routes take. */
  uri_too_long: 414,
  /** The request line and headers are larger than Node's limit (16 KiB). */
  headers_too_large: 431,
  /** The headers (or the whole request) did not arrive within the listener's timeouts. */
  request_timeout: 408,
  /** An `expect` header other than `100-continue`. */
  expectation_failed: 417,
  /** Cluster: the run's shard has no serving owner right now (a handover); retry shortly. */
  shard_unavailable: 503,
  /** The agent transport holds its maximum of sockets; retry later. */
  agent_transport_full: 503,
  /** The request arrived while the server was stopping. */
  shutting_down: 503,
  /** No route has this method and path. */
  route_not_found: 404,
  /** A request the HTTP layer refused before it reached a route (bad header, …). */
  bad_request: 400,
  /** A fault of the server itself; the message names no internals. */
  internal: 500,
  /** Start-up: the configuration file cannot be read or is refused. */
  config_invalid: 400,
  /** Start-up: the database was written by a newer Skein than this one. */
  storage_schema_too_new: 500,
  /** Start-up: the storage URL or files cannot be opened. */
  storage_unavailable: 500,
} as const satisfies Record<string, number>;

export type WorkflowErrorCode = keyof typeof ERRORS;

/** A refusal from the catalogue; its status comes from the catalogue, never from the caller. */
export function workflowError(
  code: WorkflowErrorCode,
  message: string,
  cause?: unknown,
): SkeinError {
  return new SkeinError(code, message, { status: ERRORS[code], cause });
}

export function isWorkflowErrorCode(code: string): code is WorkflowErrorCode {
  return Object.hasOwn(ERRORS, code);
}
