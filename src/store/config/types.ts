/**
 * The typed values the store's configuration decodes to. Field names keep the spec's
 * spelling, so a reader can go from the spec's tables to the code without a mapping. Counts
 * that may exceed 2^53 (u64 and platform-sized fields) are bigints; fields whose range fits a
 * JavaScript number exactly (u32 and small ranges) are numbers. Durations are bigint
 * milliseconds (or seconds where the spec says so) already checked against the monotonic
 * clock. Absent optional objects are `null`.
 */

import type { ListenAddress } from "./addresses.ts";

/** The service file, as `serve` uses it (the `mcp_http` object is decoded for types only). */
export interface StoreServiceConfig {
  readonly data_dir: string;
  /** null: resolved from the store name in the private runtime directory at start-up. */
  readonly socket: string | null;
  /** null: the basename of the canonical data directory, at start-up. */
  readonly name: string | null;
  readonly branch_cache_bytes_per_shard: bigint;
  readonly max_frame: number;
  readonly max_clients: bigint;
  readonly max_page: number;
  readonly timeout_ms: bigint;
  readonly create: StoreCreateSettings | null;
  readonly append_prune_keep_ceiling: number;
  readonly append_prune_removal_cap: number;
  readonly changes_scan_records: bigint;
  readonly changes_node_budget: bigint;
  readonly changes_max_page: number;
  readonly kept_versions: number;
  readonly retention: RetentionSettings;
  readonly idp: StoreIdpSettings | null;
  readonly mcp_http: McpHttpSettings | null;
  /** A loopback address for `GET /metrics` (Prometheus); null: no metrics listener. */
  readonly metrics_listen: ListenAddress | null;
  /** The query group: null when all six fields are omitted (queries disabled). */
  readonly query: QuerySettings | null;
  /** The embedding group: null when its fourteen required fields are omitted. */
  readonly embed: EmbedSettings | null;
}

export interface StoreCreateSettings {
  readonly shards: bigint;
  readonly cache_bytes_total: bigint;
  readonly executor_threads: bigint;
}

export interface QuerySettings {
  readonly query_worker: string;
  readonly query_time_ms: bigint;
  readonly query_memory_bytes: bigint;
  readonly query_outputs_per_record: bigint;
  readonly query_scan_records: bigint;
  readonly query_max_running: bigint;
}

export interface EmbedSettings {
  readonly embed_worker: string;
  readonly embed_model_dir: string;
  readonly embed_model_sha256: string;
  readonly embed_memory_bytes: bigint;
  readonly embed_threads: bigint;
  readonly embed_batch_items: bigint;
  readonly embed_input_bytes: bigint;
  readonly embed_tokens: bigint;
  readonly embed_frame_bytes: number;
  readonly embed_ready_ms: bigint;
  readonly embed_call_ms: bigint;
  readonly embed_waiting: bigint;
  readonly embed_request_items: bigint;
  readonly embed_page_records: number;
  readonly embed_writer_wait_ms: bigint;
  readonly embed_windows: boolean;
  /** Set (default 32) only when embed_windows is true; null otherwise. */
  readonly embed_max_windows: bigint | null;
  /** Set (default 64) only when embed_windows is true; null otherwise. */
  readonly embed_window_overlap_tokens: bigint | null;
  readonly embed_restart_ms: bigint;
  readonly embed_restart_most_ms: bigint;
  readonly embed_question_worker: boolean;
}

export interface RetentionSettings {
  readonly release_max_rows: number;
  readonly release_batch: bigint;
  /** null when `keep` is absent: the release driver keeps every history row. */
  readonly keep: RetentionKeep | null;
}

export interface RetentionKeep {
  /** null when absent or null: unset (keep everything). */
  readonly versions: bigint | null;
  readonly days: number | null;
}

export interface StoreIdpSettings {
  /** The identity provider's origin (`https://idp.example`), exactly as configured. */
  readonly issuer: string;
  readonly database: string;
  readonly placement_credential_file: string | null;
}

/** `mcp_http` decoded for types and unknown fields only (what `serve` checks). */
export interface McpHttpSettings {
  readonly listen: string;
  readonly allowed_origins: readonly string[];
  readonly path: string;
  readonly resource_metadata_url: string | null;
  readonly max_connections: bigint;
  readonly header_timeout_ms: bigint;
  readonly body_timeout_ms: bigint;
}

/** `mcp_http` with its whole policy checked (what `mcp-http` runs on). */
export interface McpHttpPolicy {
  readonly listen: ListenAddress;
  /** Canonical origins, without duplicates. */
  readonly allowed_origins: ReadonlySet<string>;
  readonly path: string;
  readonly resource_metadata_url: string | null;
  readonly max_connections: bigint;
  readonly header_timeout_ms: bigint;
  readonly body_timeout_ms: bigint;
}

export interface DoorConfig {
  readonly listen: ListenAddress;
  readonly origin: string;
  readonly files: string;
  readonly stores: ReadonlyMap<string, string>;
  readonly timeout_ms: bigint;
  readonly max_connections: bigint;
  readonly idp: DoorIdpSettings;
}

export interface DoorIdpSettings {
  /** The discovery address, as configured. */
  readonly issuer: string;
  readonly client_id: string;
  readonly secret_file: string;
  readonly redirect: string;
}

/** The door's environment variables (`SERVICE_…`). */
export interface DoorEnv {
  readonly SERVICE_PENDING_SIGNINS: bigint;
  readonly SERVICE_SESSION_SECONDS: bigint;
  readonly SERVICE_IDP_CONNECT_TIMEOUT_MS: bigint;
  readonly SERVICE_IDP_TIMEOUT_MS: bigint;
}
