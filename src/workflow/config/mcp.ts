/**
 * The `[mcp]` table: whether `skein serve` offers its MCP endpoint on the HTTP listener, at
 * which path, to which browser origins, how many connections may carry it at once, and how
 * many sessions it holds for how long (docs/mcp-workflows.md). Off by default: the endpoint is a second way in, turned on on
 * purpose. Origins are compared with the `Origin` header as strings, so each must be the
 * canonical `scheme://host[:port]` a browser sends.
 */

import {
  array,
  boolean,
  type Decoder,
  describeValue,
  refine,
  refuse,
  string,
  u32,
  withDefault,
} from "../../common/decode/index.ts";
import { parseCanonicalOrigin } from "../../common/origins.ts";

export const DEFAULT_MCP_PATH = "/mcp";
/**
 * Connections that may carry MCP requests at once: an agent keeps one (keep-alive) while it
 * works, so this bounds agents, not requests; the HTTP listener's own cap still applies.
 */
export const DEFAULT_MCP_MAX_CONNECTIONS = 64;
/**
 * MCP sessions held at once (each a Server, its subscriptions and maybe an open GET stream);
 * one more `initialize` is refused, so clients that never end theirs cannot grow the table.
 */
export const DEFAULT_MCP_MAX_SESSIONS = 256;
/** A session unused this long (no request, no open GET stream) ends. */
export const DEFAULT_MCP_SESSION_IDLE_MS = 1_800_000;
/** Origins one configuration may allow: a list, not a directory. */
export const MCP_ALLOWED_ORIGINS_MAX = 256;

const origin: Decoder<string> = {
  expected: "canonical origin string",
  schema: { type: "string", description: "canonical origin (scheme://host[:port])" },
  run(value, path) {
    if (typeof value !== "string") {
      return refuse(
        "type",
        path,
        `expected canonical origin string, found ${describeValue(value)}`,
      );
    }
    const parsed = parseCanonicalOrigin(value);
    if (!parsed.ok) return refuse("shape", path, `${JSON.stringify(value)} ${parsed.reason}`);
    return parsed.value.origin;
  },
};

const path = refine(
  string({
    minBytes: 2,
    maxBytes: 256,
    pattern: /^(\/[A-Za-z0-9._-]+)+$/,
    patternReason: "must be an absolute path of plain segments (letters, digits, '.', '_', '-')",
    expected: "request path",
  }),
  (text) =>
    text.split("/").some((segment) => segment === "." || segment === "..")
      ? "must not have . or .. segments"
      : undefined,
);

export const mcpFields = {
  enabled: withDefault(boolean(), false),
  path: withDefault(path, DEFAULT_MCP_PATH),
  allowed_origins: withDefault(array(origin, { max: MCP_ALLOWED_ORIGINS_MAX }), []),
  max_connections: withDefault(u32({ min: 1, max: 1_000_000 }), DEFAULT_MCP_MAX_CONNECTIONS),
  max_sessions: withDefault(u32({ min: 1, max: 100_000 }), DEFAULT_MCP_MAX_SESSIONS),
  session_idle_ms: withDefault(u32({ min: 1_000, max: 86_400_000 }), DEFAULT_MCP_SESSION_IDLE_MS),
};
