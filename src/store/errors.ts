/**
 * The store service's catalogue of run-time refusals. Every refusal a caller can see over the
 * socket, from `StoreClient` or from `skein-store call` is declared here once, with the
 * spec's code where the spec names one (`page_limit`, `changes_node_budget`,
 * `append_prune_keep_limit`, the `query_…` limits) and our own snake_case code elsewhere; docs/store-protocol.md
 * lists them all and a test checks the two agree.
 */

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
