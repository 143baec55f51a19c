/**
 * The workflow server's error catalogue: every code the server can give, declared once in the
 * section of the place it surfaces, so a code can never drift from its status and each
 * section's doc table lists exactly these codes (test/workflow/errors.test.ts checks both
 * ways). Sections: HTTP refusals (docs/http-api.md, with their status), start-up refusals
 * (the server does not start), run failures (codes a run ends with, docs/workflows.md),
 * attempt failures the server itself records in a run's history (docs/workflows.md), worker
 * stream refusals with their gRPC status (docs/workers.md), engine faults that only a defect
 * or a corrupt database shows (docs/engine.md), supervision (docs/deployments.md) and the
 * command line (docs/cli.md). Callers raise them through the typed constructors below;
 * decode refusals are DecodeErrors of the decoding core and carry their own field codes.
 */

import { SkeinError } from "../common/errors.ts";

/** What a client of the HTTP API can be answered, with the status it is answered with. */
export const HTTP_REFUSALS = {
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
  /** A body field is refused by its decoder (raised by the decoding core, its default code). */
  decode_refused: 400,
  /** `POST /namespaces` with a name that is empty after trimming (or over 255 bytes). */
  invalid_namespace_name: 400,
  /** A request names no namespace and `namespaces.default` is not set. */
  namespace_required: 400,
  /** Work in an absent namespace while `namespaces.auto_create = "closed"`; describe or delete of an absent one. */
  namespace_not_found: 404,
  /** Deleting a namespace that still has runs (any status). */
  namespace_not_empty: 409,
  /** Deleting `namespaces.default` (start-up would create it again). */
  namespace_is_default: 409,
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
  /** A start's input does not satisfy its definition's `input_schema`. */
  invalid_input: 400,
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
  /** The server holds its maximum of live streams (history, transcript); retry later. */
  too_many_streams: 503,
  /** The request arrived while the server was stopping. */
  shutting_down: 503,
  /** MCP endpoint: a present `Origin` header that is not one of `mcp.allowed_origins`. */
  origin_not_allowed: 403,
  /** MCP endpoint: `mcp.max_connections` connections already carry MCP requests. */
  mcp_connections_full: 503,
  /** MCP endpoint: GET or DELETE without a session (`Mcp-Session-Id`). */
  method_not_allowed: 405,
  /** MCP endpoint: an `initialize` while `mcp.max_sessions` sessions are open. */
  mcp_sessions_full: 503,
  /** MCP endpoint: an `Mcp-Session-Id` naming no open session of the bearer's subject. */
  session_not_found: 404,
  /** MCP session: a `resources/subscribe` past the session's bound (a JSON-RPC error's data). */
  mcp_subscriptions_full: 400,
  /** No route has this method and path. */
  route_not_found: 404,
  /** A request the HTTP layer refused before it reached a route (bad header, …). */
  bad_request: 400,
  /** A fault of the server itself; the message names no internals. */
  internal: 500,
  /** `POST /admin/backup`: the target already exists (a backup never overwrites). */
  backup_exists: 409,
  /** `POST /admin/backup`: the target's directory does not exist or cannot be written. */
  invalid_backup_path: 400,
  /** `POST /admin/backup` on PostgreSQL storage: back it up with pg_dump (operations.md). */
  backup_unsupported: 409,
  /** `POST /admin/backup`: the copy failed midway; nothing is left at the target. */
  backup_failed: 500,
} as const satisfies Record<string, number>;

/** Why the server does not start (the status only orders them; no HTTP answer carries one). */
export const STARTUP_REFUSALS = {
  /** The configuration file cannot be read or is refused. */
  config_invalid: 400,
  /** The database was written by a newer Skein than this one. */
  storage_schema_too_new: 500,
  /** The storage URL or files cannot be opened. */
  storage_unavailable: 500,
  /** The worker endpoint's listen address is not `host:port`. */
  invalid_listen: 400,
  /** The worker endpoint cannot listen on its address (in use, not permitted). */
  listen_failed: 500,
} as const satisfies Record<string, number>;

/** Every code `workflowError` raises, with its status. */
export const ERRORS = { ...HTTP_REFUSALS, ...STARTUP_REFUSALS } as const;

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

/**
 * The codes a failed run ends with (its `RunFailed` event). A child's definition that cannot
 * be resolved ends its parent with the resolver's code (`definition_not_found`); a child input
 * its definition's schema refuses ends it with `invalid_input`, as a start is refused.
 */
export const RUN_FAILURES = {
  activity_failed: "an activity failed on its last attempt, or with a non-retryable code",
  expression_failed: "an expression threw, exceeded its limits, or yielded the wrong shape",
  collect_too_many_items: "a collect's `items` yields more than `max_items` items",
  wait_timed_out: "a `wait` with `on_timeout: fail` reached its `timeout_ms`",
  child_failed: "a child run failed",
  child_cancelled: "a child run was cancelled (not by its parent's own cancellation)",
  child_workflows_unavailable: "a `child` step in an engine built without a child resolver",
  definition_not_found: "a `child` step names a definition that is not registered",
  invalid_input: "a `child` step's input does not satisfy the child definition's `input_schema`",
} as const;

export type RunFailureCode = keyof typeof RUN_FAILURES;

/** A run failure raised while deciding (an expression, a child resolution). */
export function runFailure(code: RunFailureCode, message: string): SkeinError {
  return new SkeinError(code, message);
}

/**
 * Attempt failures the server records itself (`ActivityFailed`), besides those a worker
 * reports (docs/workers.md). Both are retried by the run's retry policy.
 */
export const ATTEMPT_FAILURES = {
  task_queue_full: "the task queue already holds its bound of waiting attempts",
  bad_output: "the worker's output is not JSON, or nests deeper than 512 levels",
} as const;

export type AttemptFailureCode = keyof typeof ATTEMPT_FAILURES;

/** An attempt failure the matcher or the engine raises; the engine records it in history. */
export function attemptFailure(code: AttemptFailureCode, message: string): SkeinError {
  return new SkeinError(code, message, { status: 409 });
}

/** The gRPC statuses a worker stream ends with (names of `@grpc/grpc-js`'s `status`). */
export type GrpcStatusName =
  | "INVALID_ARGUMENT"
  | "DEADLINE_EXCEEDED"
  | "NOT_FOUND"
  | "PERMISSION_DENIED"
  | "INTERNAL"
  | "UNAVAILABLE"
  | "UNAUTHENTICATED";

/** How a worker stream is refused: the code the worker prints, and the gRPC status. */
export const STREAM_REFUSALS = {
  unauthenticated: "UNAUTHENTICATED",
  forbidden: "PERMISSION_DENIED",
  namespace_not_found: "NOT_FOUND",
  invalid_hello: "INVALID_ARGUMENT",
  hello_expected: "INVALID_ARGUMENT",
  hello_timeout: "DEADLINE_EXCEEDED",
  invalid_frame: "INVALID_ARGUMENT",
  reattach_refused: "PERMISSION_DENIED",
  internal: "INTERNAL",
  stream_aborted: "UNAVAILABLE",
} as const satisfies Record<string, GrpcStatusName>;

export type StreamRefusalCode = keyof typeof STREAM_REFUSALS;

const HTTP_OF_GRPC: Readonly<Record<GrpcStatusName, number>> = {
  INVALID_ARGUMENT: 400,
  DEADLINE_EXCEEDED: 400,
  NOT_FOUND: 404,
  PERMISSION_DENIED: 403,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  UNAUTHENTICATED: 401,
};

/** A refusal of a worker stream; the transport ends the stream with `grpcStatus`. */
export class StreamRefusal extends SkeinError {
  readonly grpcStatus: GrpcStatusName;

  constructor(code: StreamRefusalCode, message: string) {
    const grpcStatus = STREAM_REFUSALS[code];
    super(code, message, { status: HTTP_OF_GRPC[grpcStatus] });
    this.name = "StreamRefusal";
    this.grpcStatus = grpcStatus;
  }
}

export function streamRefusal(code: StreamRefusalCode, message: string): StreamRefusal {
  return new StreamRefusal(code, message);
}

/**
 * Faults between the engine's own parts: a user sees one only through a defect or a database
 * edited by hand (HTTP answers them as themselves, with this status).
 */
export const ENGINE_FAULTS = {
  /** `start` with a run id the engine already holds. */
  run_exists: 409,
  /** The matcher already holds this attempt (a worker re-attached it): not an error. */
  attempt_already_dispatched: 409,
  /** A stored history breaks the rules of the decision core. */
  history_corrupt: 500,
  /** A run is decided against another version of its definition than it pinned. */
  definition_mismatch: 500,
} as const satisfies Record<string, number>;

export type EngineFaultCode = keyof typeof ENGINE_FAULTS;

export function engineFault(code: EngineFaultCode, message: string): SkeinError {
  return new SkeinError(code, message, { status: ENGINE_FAULTS[code] });
}

/** What the supervisor records for a worker it could not run (docs/deployments.md). */
export const SUPERVISION_FAILURES = {
  launch_failed: "the worker's command could not be started (not found, not executable)",
} as const;

export function supervisionFailure(
  code: keyof typeof SUPERVISION_FAILURES,
  message: string,
): SkeinError {
  return new SkeinError(code, message);
}

/** What the `skein` client commands end with besides the server's own codes (docs/cli.md). */
export const CLI_FAILURES = {
  server_unreachable: 503,
  record_file_unreadable: 400,
  /** The server answered an error without a code of ours (a proxy in between, say). */
  http_error: 502,
} as const satisfies Record<string, number>;

export function cliFailure(
  code: keyof typeof CLI_FAILURES,
  message: string,
  status: number = CLI_FAILURES[code],
): SkeinError {
  return new SkeinError(code, message, { status });
}

/** Every section, for the documentation test and for code that asks "is this ours?". */
export const CATALOGUE = {
  http: HTTP_REFUSALS,
  startup: STARTUP_REFUSALS,
  run: RUN_FAILURES,
  attempt: ATTEMPT_FAILURES,
  stream: STREAM_REFUSALS,
  engine: ENGINE_FAULTS,
  supervision: SUPERVISION_FAILURES,
  cli: CLI_FAILURES,
} as const;
