/**
 * The store service's error catalogue, one section per place a code surfaces. Run-time
 * refusals: every refusal a caller can see over the socket, from `StoreClient` or from
 * `skein-store call`, with the spec's code where the spec names one (`page_limit`,
 * `changes_node_budget`, `append_prune_keep_limit`, the `query_…` limits) and our own
 * snake_case code elsewhere (docs/store-protocol.md). Start-up refusals: what `serve` refuses
 * with after its service file decoded (docs/store-config.md). Configuration refusals of our
 * own and the wording the door and `mcp_http` documents wrap their refusals in
 * (docs/store-config.md). test/store/errors.test.ts checks each section against its doc
 * table both ways.
 */

import type { Decoder, Path } from "../common/decode/index.ts";
import { DecodeError } from "../common/decode/index.ts";
import { SkeinError } from "../common/errors.ts";

export const STORE_REFUSALS = {
  // Spec runtime refusals.
  page_limit: "a requested page is larger than the configured maximum",
  changes_node_budget: "a shard diff needed more tree nodes than changes_node_budget",
  append_prune_keep_limit: "keep is above append_prune_keep_ceiling",
  query_busy: "query_max_running queries are already running",
  query_time_limit: "the query ran longer than query_time_ms",
  query_memory_limit: "the query needed more memory than query_memory_bytes",
  query_output_limit: "one record gave more outputs than query_outputs_per_record",
  query_scan_limit: "the page needed more than query_scan_records records examined",
  // Queries.
  query_disabled: "the service file configures no query worker",
  query_code_error: "the query's code does not compile, is not a function, or threw",
  query_worker_failed: "the query worker exited or broke the worker protocol mid-query",
  query_worker_missing: "the start-up probe found no file at query_worker",
  query_worker_not_file: "the start-up probe found query_worker is not a regular file",
  query_worker_not_executable: "the start-up probe found query_worker is not executable",
  query_worker_probe_failed: "the query worker did not pass the start-up probe",
  // Embedding (spec runtime refusals, then our own).
  embed_busy: "embed_waiting callers already wait for the embedding worker",
  embed_request_too_large: "a request carries more than embed_request_items texts",
  embed_input_too_large: "a text is larger than embed_input_bytes",
  embed_admission_wait_exceeded:
    "an embedding commit waited longer than embed_writer_wait_ms for the store's writer",
  embed_worker_start_timeout: "the embedding worker did not say ready within embed_ready_ms",
  windows_over_cap: "the text needs more than embed_max_windows windows",
  embed_limits: "the embedding limits do not fit the model (the message names the rule)",
  embed_model_missing: "a model file is absent or unreadable",
  embed_model_mismatch: "the model's identity is not embed_model_sha256",
  embed_model_change_not_available: "the field is already embedded with another model",
  embed_worker_missing: "embed_worker names no file",
  embed_worker_not_file: "embed_worker is not a regular file",
  embed_worker_not_executable: "embed_worker is not executable",
  embed_disabled: "the service file has no embedding group",
  embed_worker_failed:
    "the embedding worker died, broke the protocol or did not answer within embed_call_ms; it is restarted",
  embed_field_not_found: "no embedded field of that collection",
  embed_version_not_embedded:
    "the walk has not embedded that version of the branch (yet), or its vectors are released",
  // Backups.
  backup_exists: "the backup target already exists (a backup never overwrites)",
  backup_failed:
    "the backup could not be written (the message says why; nothing is left at the target)",
  // Requests.
  invalid_request: "the request does not decode (the message names the field)",
  unknown_verb: "the verb is not one the store offers",
  invalid_cursor: "the cursor was not issued by this verb",
  // Model.
  collection_not_found: "no collection by that name",
  collection_exists: "a collection by that name already exists",
  branch_not_found: "no branch by that name in the collection",
  branch_exists: "a branch by that name already exists in the collection",
  branch_protected: "the main branch cannot be deleted",
  version_not_found: "the version is not retained on that branch",
  ref_not_found: "the ref names no branch, tag or retained version of the collection",
  tag_exists: "a tag by that name already exists in the collection",
  head_moved: "the branch head is not the version the request expected (expect_head, expect_from)",
  merge_conflict:
    "both sides changed keys differently and the strategy is fail; nothing was committed",
  merge_ancestor_budget:
    "the common ancestor is more than changes_node_budget versions back; nothing was committed",
  merge_base_released:
    "the common ancestor of the two versions is no longer retained (released by retention)",
  // Store files.
  store_exists: "the data directory already holds a store",
  store_missing: "the data directory holds no store",
  store_format: "the store was written by a format this build does not read",
  // Transport.
  hello_required: "the first frame of a connection must be hello",
  max_clients: "the store already serves max_clients clients",
  frame_too_large: "a frame is larger than the negotiated max_frame",
  timeout: "a frame exchange took longer than timeout_ms",
  malformed_frame: "a frame payload is not a valid message",
  connection_closed: "the connection closed before the answer arrived",
  // Identity provider (only with `idp`).
  pass_required: "hello carries no pass, and this store decides every act by its identity provider",
  pass_invalid: "the pass is not a token signed by the identity provider's keys",
  pass_expired: "the pass has expired (at hello, or since: acts after its expiry are refused)",
  pass_foreign_issuer: "the pass was issued by another identity provider",
  pass_wrong_audience: "the pass is for another resource than this store's database",
  permission_denied: "the identity provider denied the act",
  idp_unavailable:
    "the identity provider did not answer in time or at all; the act is refused, never allowed",
  placement_failed:
    "the identity provider did not place the new collection or branch; nothing was created",
  internal_error:
    "the store failed to carry out the request (a write the disk refused, or a defect)",
} as const;

export type StoreRefusalCode = keyof typeof STORE_REFUSALS;

export function storeError(code: StoreRefusalCode, message?: string): SkeinError {
  return new SkeinError(code, message ?? STORE_REFUSALS[code]);
}

/**
 * The codes `serve` refuses with at start-up, after the service file decoded: checks that
 * need the file system or other processes. Each refusal's message starts with the field it
 * concerns.
 */
export const STARTUP_REFUSALS = {
  invalid_data_dir:
    "data_dir is not a directory holding a store (or, with --create, cannot be one)",
  invalid_socket: "the socket path's parent is not private, or a live file is in the way",
  invalid_runtime_location: "the runtime directory is not private to this user",
  endpoint_too_long: "the socket path is longer than 107 bytes",
  invalid_store_name: "the store name breaks the name rule",
  create_section_required: "`serve --create` without a `create` object",
  store_name_in_use: "another live `serve` owns this store name",
  invalid_metrics_listen: "`metrics_listen` cannot be bound (the port is taken, say)",
} as const;

export type StartupRefusalCode = keyof typeof STARTUP_REFUSALS;

export const INVALID_DATA_DIR = "invalid_data_dir";
export const INVALID_SOCKET = "invalid_socket";
export const INVALID_RUNTIME_LOCATION = "invalid_runtime_location";
export const ENDPOINT_TOO_LONG = "endpoint_too_long";
export const INVALID_STORE_NAME = "invalid_store_name";
/** `serve --create` without a `create` object. */
export const CREATE_SECTION_REQUIRED = "create_section_required";
/** Another live `serve` owns this store name. */
export const STORE_NAME_IN_USE = "store_name_in_use";
/** `metrics_listen` cannot be bound (in use, say); nothing is left behind. */
export const INVALID_METRICS_LISTEN = "invalid_metrics_listen";

export function startupRefusal(
  code: StartupRefusalCode,
  field: string,
  reason: string,
): SkeinError {
  return new SkeinError(code, `${field}: ${reason}`);
}

/**
 * Configuration refusals of our own (the spec's field codes are the decoders'): every command
 * that reads a file refuses with one line, `<code>: <message>`.
 */
export const CONFIG_REFUSALS = {
  decode_refused: "a decode refusal for which the spec gives no code",
  door_config_invalid: "any door file or door environment refusal",
  mcp_http_config_invalid: "any refusal of the `mcp_http` policy",
  config_file_unreadable: "the configuration file cannot be opened or is not a regular file",
  config_file_too_large: "the configuration file is larger than 1048576 bytes",
  invalid_credential_file: "an app credential file is unreadable, empty or not one clean line",
} as const;

export type ConfigRefusalCode = keyof typeof CONFIG_REFUSALS;

/*
 * Refusal wording shared by the store's configuration decoders. Two documents wrap every
 * refusal in a fixed sentence: the door file ("the door configuration is not valid",
 * then the reason) and the `mcp_http` policy (code `mcp_http_config_invalid`, "service
 * configuration is not valid"); the query group prefixes its fields' refusals with
 * "query setting". `withContext` rewrites a refusal raised inside a decoder that way while
 * keeping its kind and field, so tests and callers still switch on both.
 */

/** The door's code for every refusal of its file or environment (the spec gives a message). */
export const DOOR_CONFIG_INVALID = "door_config_invalid";
export const DOOR_CONFIG_MESSAGE = "the door configuration is not valid";
export const MCP_HTTP_CONFIG_INVALID = "mcp_http_config_invalid";
export const MCP_HTTP_CONFIG_MESSAGE = "service configuration is not valid";

/** A refusal whose message is `text`, keeping the original kind, field and reason. */
export function rewrite(error: DecodeError, text: string, code = error.code): DecodeError {
  const copy = new DecodeError(error.kind, undefined, error.reason, code);
  return Object.assign(copy, { field: error.field, message: text });
}

/**
 * Runs `inner`; a refusal it raises is re-read as `<prefix>: <message>` (or, with
 * `fieldLabel`, `<prefix> <field>: <reason>`) under `code` when given.
 */
export function withContext<T>(
  inner: Decoder<T>,
  options: { prefix: string; code?: string; fieldLabel?: boolean },
): Decoder<T> {
  return {
    expected: inner.expected,
    run(value: unknown, path: Path) {
      try {
        return inner.run(value, path);
      } catch (error) {
        if (!(error instanceof DecodeError)) throw error;
        const text = options.fieldLabel
          ? `${options.prefix} ${error.field}: ${error.reason}`
          : `${options.prefix}: ${error.message}`;
        throw rewrite(error, text, options.code ?? error.code);
      }
    },
  };
}
