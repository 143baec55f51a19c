/**
 * The `mcp_http` object of the service file, in two strengths. `serve` decodes it for types
 * and unknown fields only (`mcpHttpSettings`): it never starts HTTP, so it does not judge
 * the listener policy. `mcp-http` decodes the full policy (`mcpHttpPolicy`): a loopback
 * listen address behind a TLS proxy, canonical allowed origins, a plain request path, a
 * header-safe resource metadata URL and representable deadlines. Every refusal of either
 * is `mcp_http_config_invalid` and reads "service configuration is not valid: <field>:
 * <rule>".
 */

import {
  array,
  type Decoder,
  describeValue,
  durationMs,
  map,
  nullable,
  object,
  type Path,
  refuse,
  string,
  u64,
  usize,
  withDefault,
} from "../../common/decode/index.ts";
import { MCP_HTTP_CONFIG_INVALID, MCP_HTTP_CONFIG_MESSAGE, withContext } from "../errors.ts";
import {
  isLoopbackHostname,
  type ListenAddress,
  parseAllowedOrigin,
  parseLoopbackListen,
} from "./addresses.ts";
import {
  MCP_PATH_MAX_BYTES,
  MCP_PATH_MIN_BYTES,
  RESOURCE_METADATA_URL_MAX_BYTES,
} from "./limits.ts";
import type { McpHttpPolicy, McpHttpSettings } from "./types.ts";

export const MCP_HTTP_DEFAULTS = {
  path: "/mcp",
  max_connections: 64n,
  header_timeout_ms: 2000n,
  body_timeout_ms: 5000n,
} as const;

function policy<T>(inner: Decoder<T>): Decoder<T> {
  return withContext(inner, { prefix: MCP_HTTP_CONFIG_MESSAGE, code: MCP_HTTP_CONFIG_INVALID });
}

/** A string decoder whose shape rule is `parse`; its reason is prefixed by `rule`. */
function shaped<T>(
  expected: string,
  parse: (text: string) => { ok: true; value: T } | { ok: false; reason: string },
  rule: string,
): Decoder<T> {
  return {
    expected,
    run(value: unknown, path: Path) {
      if (typeof value !== "string") {
        if (value === null) refuse("null", path, `null is not accepted; expected ${expected}`);
        refuse("type", path, `expected ${expected}, found ${describeValue(value)}`);
      }
      const parsed = parse(value);
      if (!parsed.ok) refuse("shape", path, `${rule} (${JSON.stringify(value)} ${parsed.reason})`);
      return parsed.value;
    },
  };
}

export const loopbackListen: Decoder<ListenAddress> = shaped(
  "loopback socket address string",
  parseLoopbackListen,
  "listen must be a loopback address behind a TLS proxy",
);

const allowedOrigin: Decoder<string> = shaped(
  "canonical origin string",
  parseAllowedOrigin,
  "allowed origins must be canonical origins",
);

const PATH_CHARS = /^[A-Za-z0-9/._-]+$/;

/** The reason `text` is not a plain absolute request path, or undefined. */
export function mcpPathProblem(text: string): string | undefined {
  if (text.length < MCP_PATH_MIN_BYTES || text.length > MCP_PATH_MAX_BYTES) {
    return `must be ${MCP_PATH_MIN_BYTES} to ${MCP_PATH_MAX_BYTES} bytes`;
  }
  if (!PATH_CHARS.test(text)) return "may hold only letters, digits, /, -, _ and dots";
  if (!text.startsWith("/")) return "must begin with /";
  if (text.endsWith("/")) return "must not end with /";
  if (text.includes("//")) return "must not contain //";
  if (text.split("/").some((s) => s === "." || s === "..")) {
    return "must not have . or .. segments";
  }
  return undefined;
}

const mcpPath: Decoder<string> = shaped(
  "request path string",
  (text) => {
    const problem = mcpPathProblem(text);
    return problem === undefined ? { ok: true, value: text } : { ok: false, reason: problem };
  },
  "path must be an absolute request path of plain segments",
);

/** The reason `text` cannot be the challenge's resource metadata URL, or undefined. */
export function resourceMetadataUrlProblem(text: string): string | undefined {
  if (Buffer.byteLength(text, "utf8") > RESOURCE_METADATA_URL_MAX_BYTES) {
    return `must be at most ${RESOURCE_METADATA_URL_MAX_BYTES} bytes`;
  }
  // One header value inside a quoted parameter: printable ASCII, no quote, no backslash.
  if (!/^[\x21-\x7e]*$/.test(text)) return "must be printable ASCII without spaces";
  if (text.includes('"') || text.includes("\\")) return "must not contain quotes or backslashes";
  if (text.includes("#")) return "must not have a fragment";
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "is not an absolute URL";
  }
  if (url.username !== "" || url.password !== "" || /^[a-z]+:\/\/[^/?#]*@/i.test(text)) {
    return "must not carry credentials";
  }
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && isLoopbackHostname(url.hostname)) return undefined;
  return "must use https (http only for a literal loopback IP)";
}

const resourceMetadataUrl: Decoder<string> = shaped(
  "URL string",
  (text) => {
    const problem = resourceMetadataUrlProblem(text);
    return problem === undefined ? { ok: true, value: text } : { ok: false, reason: problem };
  },
  "resource_metadata_url must be an https URL safe as one header value",
);

const DEADLINE = "HTTP deadline is not representable";

/** Types and unknown fields only: what `serve` checks of `mcp_http`. */
export const mcpHttpSettings: Decoder<McpHttpSettings> = policy(
  object({
    listen: string(),
    allowed_origins: array(string()),
    path: withDefault(string(), MCP_HTTP_DEFAULTS.path),
    resource_metadata_url: withDefault(nullable(string()), null),
    max_connections: withDefault(usize({ min: 1 }), MCP_HTTP_DEFAULTS.max_connections),
    header_timeout_ms: withDefault(u64({ min: 1 }), MCP_HTTP_DEFAULTS.header_timeout_ms),
    body_timeout_ms: withDefault(u64({ min: 1 }), MCP_HTTP_DEFAULTS.body_timeout_ms),
  }),
);

/** The whole listener policy: what `mcp-http` runs on. */
export const mcpHttpPolicy: Decoder<McpHttpPolicy> = policy(
  map(
    object({
      listen: loopbackListen,
      allowed_origins: array(allowedOrigin),
      path: withDefault(mcpPath, MCP_HTTP_DEFAULTS.path),
      resource_metadata_url: withDefault(nullable(resourceMetadataUrl), null),
      max_connections: withDefault(usize({ min: 1 }), MCP_HTTP_DEFAULTS.max_connections),
      header_timeout_ms: withDefault(
        durationMs({ clockReason: DEADLINE }),
        MCP_HTTP_DEFAULTS.header_timeout_ms,
      ),
      body_timeout_ms: withDefault(
        durationMs({ clockReason: DEADLINE }),
        MCP_HTTP_DEFAULTS.body_timeout_ms,
      ),
    }),
    (m) => ({ ...m, allowed_origins: new Set(m.allowed_origins) }),
  ),
);
