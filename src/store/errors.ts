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
