/** Valid service-file parts the configuration tables start from and change one field of. */

import { type Doc, n } from "./rows.ts";

export const CORE: Doc = {
  data_dir: "/srv/skein/store",
  branch_cache_bytes_per_shard: n(67108864),
  max_frame: n(16777216),
  max_clients: n(256),
  max_page: n(1000),
  timeout_ms: n(30000),
};

export const QUERY: Doc = {
  query_worker: "/usr/lib/skein/query-worker",
  query_time_ms: n(2000),
  query_memory_bytes: n(67108864),
  query_outputs_per_record: n(16),
  query_scan_records: n(100000),
  query_max_running: n(4),
};

export const EMBED: Doc = {
  embed_worker: "/usr/lib/skein/embed-worker",
  embed_model_dir: "/var/lib/skein/model",
  embed_model_sha256: "0".repeat(64),
  embed_memory_bytes: n(1073741824),
  embed_threads: n(2),
  embed_batch_items: n(16),
  embed_input_bytes: n(65536),
  embed_tokens: n(512),
  embed_frame_bytes: n(1048576),
  embed_ready_ms: n(30000),
  embed_call_ms: n(10000),
  embed_waiting: n(64),
  embed_request_items: n(64),
  embed_page_records: n(128),
};
