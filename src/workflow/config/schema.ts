/**
 * The workflow server's configuration, declared as data. Each TOML table is an object decoder
 * whose fields all have built-in defaults, so an absent table equals an empty one; every
 * object refuses keys it does not declare, naming the key (`namespaces.bogus: unknown
 * field`). The spec's keys keep the spec's names, types and defaults exactly:
 * `namespaces.default` (string, not set), `namespaces.max_in_flight_activities` (integer,
 * 1024), `outbox.enabled` (boolean, false), and `namespaces.auto_create` whose value
 * `closed` disables automatic creation. See docs/workflow-config.md for every key.
 */

import {
  boolean,
  type ObjectDecoder,
  object,
  oneOf,
  optional,
  type Shape,
  type ShapeValue,
  string,
  u32,
  withDefault,
} from "../../common/decode/index.ts";
import { namespaceName } from "../../protocol/namespace-name.ts";
import { REQUEST_TIMEOUT_MS } from "../http/edge.ts";
import { listenAddress } from "./listen.ts";
import { mcpFields } from "./mcp.ts";

/** A table whose every field has a default: absent means "all defaults". */
function table<S extends Shape>(
  shape: S,
): ObjectDecoder<ShapeValue<S>> & {
  readonly defaults: ShapeValue<S>;
} {
  const decoder = object(shape);
  return { ...decoder, defaults: decoder.run({}, undefined) };
}

function section<S extends Shape>(shape: S) {
  const decoder = table(shape);
  return withDefault(decoder, decoder.defaults);
}

export const DEFAULT_HTTP_LISTEN = "127.0.0.1:7380";
export const DEFAULT_GRPC_LISTEN = "127.0.0.1:7381";
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;
/** Cluster shard leases and node heartbeats (PostgreSQL): renewed every third of this. */
export const DEFAULT_LEASE_TTL_MS = 10_000;
/**
 * HTTP connections held at once (agent WebSockets included). Below the usual open-file
 * limits with room for storage, workers and the gRPC endpoint; past it new connections are
 * closed on accept, so silent clients can never exhaust the process's descriptors.
 */
export const DEFAULT_MAX_CONNECTIONS = 4_096;
/**
 * From accepting a connection (or a kept-alive connection's next request) to the end of the
 * headers. A real client sends its headers in one packet; a silent or trickling one is cut.
 */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;

const STORAGE_URL = string({
  minBytes: 1,
  pattern: /^(sqlite:.+|postgres(ql)?:\/\/.+)$/,
  patternReason: "must be sqlite:PATH or postgres://…",
  expected: "storage URL",
});

const SCHEMA = string({
  pattern: /^[a-z_][a-z0-9_]{0,62}$/,
  patternReason: "must be a plain lower-case SQL identifier (a-z, 0-9, _; at most 63)",
  expected: "schema name",
});

export const configDecoder = object({
  /** Relative paths are resolved against the configuration file's directory. */
  data_dir: withDefault(string({ minBytes: 1, expected: "directory path" }), "skein-data"),
  http: section({
    listen: withDefault(listenAddress(), listenAddress().run(DEFAULT_HTTP_LISTEN, undefined)),
    max_body_bytes: withDefault(u32({ min: 1, max: 1_073_741_824 }), DEFAULT_MAX_BODY_BYTES),
    max_connections: withDefault(u32({ min: 1, max: 1_000_000 }), DEFAULT_MAX_CONNECTIONS),
    // Node refuses a headers timeout above the whole-request timeout.
    headers_timeout_ms: withDefault(
      u32({ min: 1, max: REQUEST_TIMEOUT_MS }),
      DEFAULT_HEADERS_TIMEOUT_MS,
    ),
  }),
  grpc: section({
    listen: withDefault(listenAddress(), listenAddress().run(DEFAULT_GRPC_LISTEN, undefined)),
  }),
  storage: section({
    /** Absent: `sqlite:<data_dir>/skein.db`. A relative sqlite path is under data_dir. */
    url: optional(STORAGE_URL),
    /** PostgreSQL only: the schema holding Skein's tables (created when absent). */
    schema: withDefault(SCHEMA, "skein"),
    /**
     * PostgreSQL only: connections of a node's main pool (the engine's commits and claim loops
     * and the API share it; the lease pool and the wake-up connection are apart).
     */
    pool_size: withDefault(u32({ min: 1, max: 1000 }), 10),
  }),
  cluster: section({
    shards: withDefault(u32({ min: 1, max: 65536 }), 16),
    /** Absent: the host name. */
    node_id: optional(string({ minBytes: 1, maxBytes: 255 })),
    /** How long a shard lease (and a node's heartbeat) lasts unrenewed, database clock. */
    lease_ttl_ms: withDefault(u32({ min: 300, max: 600_000 }), DEFAULT_LEASE_TTL_MS),
    /** The URL other nodes reach this node's HTTP API at; absent: the bound listen address. */
    advertise_url: optional(
      string({
        minBytes: 1,
        maxBytes: 2048,
        pattern: /^https?:\/\/[^/]+$/,
        patternReason: "must be http://host:port (no path)",
        expected: "URL",
      }),
    ),
  }),
  namespaces: section({
    default: optional(namespaceName()),
    auto_create: withDefault(oneOf(["open", "closed"]), "open"),
    max_in_flight_activities: withDefault(u32({ min: 1 }), 1024),
  }),
  outbox: section({ enabled: withDefault(boolean(), false) }),
  deployments: section({ enabled: withDefault(boolean(), false) }),
  agents: section({ transport: withDefault(boolean(), true) }),
  /** OpenTelemetry spans of runs and activities, to the process's registered provider. */
  tracing: section({ enabled: withDefault(boolean(), false) }),
  /** The MCP endpoint on the HTTP listener (docs/mcp-workflows.md); off by default. */
  mcp: section(mcpFields),
});

export type ConfigFile = ReturnType<typeof configDecoder.run>;
