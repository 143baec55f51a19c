/**
 * The store's service file: the one JSON document `serve` (and `mcp-http`) read. It holds
 * the core fields, the query and embedding groups (top-level fields enabled together),
 * the `retention`, `create`, `idp` and `mcp_http` objects. Decoding checks every type,
 * default, bound, null rule and cross-field rule the spec gives; what needs the file system
 * (does `data_dir` exist, is the socket's parent private) is checked by `serve` at start-up.
 */

import {
  absolutePath,
  type Decoder,
  durationMs,
  map,
  nullable,
  object,
  optional,
  refine,
  u32,
  u64,
  usize,
  withCode,
  withDefault,
} from "../../common/decode/index.ts";
import { checkEmbedGroup, collectEmbed, embedShape, inspectEmbedGroup } from "./embed.ts";
import { idp } from "./idp.ts";
import { loopbackListen, mcpHttpSettings } from "./mcp-http.ts";
import { collectQuery, inspectQueryGroup, queryShape } from "./query.ts";
import { RETENTION_DEFAULTS, retention } from "./retention.ts";
import { storeName } from "./store-name.ts";
import type { StoreServiceConfig } from "./types.ts";

export const INVALID_DATA_DIR = "invalid_data_dir";
export const INVALID_SOCKET = "invalid_socket";

export const SERVICE_DEFAULTS = {
  append_prune_keep_ceiling: 4096,
  append_prune_removal_cap: 64,
  changes_scan_records: 10000n,
  changes_node_budget: 65536n,
  changes_max_page: 1000,
  kept_versions: 64,
} as const;

const ABSOLUTE = "data_dir and socket must be absolute";

const create = object({
  shards: usize({ min: 1 }),
  cache_bytes_total: usize({ min: 1 }),
  executor_threads: usize({ min: 1 }),
});

const shape = {
  data_dir: withCode(absolutePath({ reason: ABSOLUTE }), INVALID_DATA_DIR),
  socket: optional(nullable(withCode(absolutePath({ reason: ABSOLUTE }), INVALID_SOCKET))),
  name: optional(nullable(storeName)),
  branch_cache_bytes_per_shard: usize({ min: 1 }),
  max_frame: u32({ min: 1 }),
  max_clients: usize({ min: 1 }),
  max_page: u32({ min: 1 }),
  timeout_ms: durationMs({ clockReason: "timeout cannot be represented by the monotonic clock" }),
  create: optional(nullable(create)),
  append_prune_keep_ceiling: withDefault(
    withCode(u32({ min: 1 }), { range: "append_prune_keep_ceiling_zero" }),
    SERVICE_DEFAULTS.append_prune_keep_ceiling,
  ),
  append_prune_removal_cap: withDefault(
    withCode(u32({ min: 1 }), { range: "append_prune_removal_cap_zero" }),
    SERVICE_DEFAULTS.append_prune_removal_cap,
  ),
  changes_scan_records: withDefault(
    refine(u64({ min: 1 }), (v) => (v < 2n ? `must be at least 2, found ${v}` : undefined), {
      kind: "range",
    }),
    SERVICE_DEFAULTS.changes_scan_records,
  ),
  changes_node_budget: withDefault(usize({ min: 1 }), SERVICE_DEFAULTS.changes_node_budget),
  changes_max_page: withDefault(u32({ min: 1 }), SERVICE_DEFAULTS.changes_max_page),
  kept_versions: withDefault(u32({ min: 1, max: 4096 }), SERVICE_DEFAULTS.kept_versions),
  retention: withDefault(retention, RETENTION_DEFAULTS),
  idp: optional(nullable(idp)),
  mcp_http: optional(nullable(mcpHttpSettings)),
  /** Where `serve` offers Prometheus metrics (`GET /metrics`); absent or null: nowhere. */
  metrics_listen: optional(nullable(loopbackListen)),
  ...queryShape,
  ...embedShape,
};

/** The service file decoder; `mcp_http` is checked for types and unknown fields only. */
export const serviceFile: Decoder<StoreServiceConfig> = map(
  object(shape, {
    inspect(raw, path) {
      inspectQueryGroup(raw, path);
      inspectEmbedGroup(raw, path);
    },
    check: checkEmbedGroup,
  }),
  (f) => ({
    data_dir: f.data_dir,
    socket: f.socket ?? null,
    name: f.name ?? null,
    branch_cache_bytes_per_shard: f.branch_cache_bytes_per_shard,
    max_frame: f.max_frame,
    max_clients: f.max_clients,
    max_page: f.max_page,
    timeout_ms: f.timeout_ms,
    create: f.create ?? null,
    append_prune_keep_ceiling: f.append_prune_keep_ceiling,
    append_prune_removal_cap: f.append_prune_removal_cap,
    changes_scan_records: f.changes_scan_records,
    changes_node_budget: f.changes_node_budget,
    changes_max_page: f.changes_max_page,
    kept_versions: f.kept_versions,
    retention: f.retention,
    idp: f.idp ?? null,
    mcp_http: f.mcp_http ?? null,
    metrics_listen: f.metrics_listen ?? null,
    query: collectQuery(f),
    embed: collectEmbed(f),
  }),
);
