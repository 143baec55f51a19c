/**
 * The refusals of the HTTP MCP endpoint itself, before a request reaches the store: each has
 * a snake_case code, an HTTP status and a fixed message. None quotes the bearer, the body or
 * a header value: the bearer is a pass, and the others may carry it.
 */

import { SkeinError } from "../../common/errors.ts";

export const MCP_REFUSALS = {
  origin_not_allowed: [403, "the Origin header is not one of mcp_http.allowed_origins"],
  bearer_required: [401, "the request needs exactly one Authorization: Bearer pass"],
  pass_refused: [401, "the store refused the pass"],
  method_not_allowed: [405, "the MCP endpoint answers POST only (stateless JSON)"],
  body_too_large: [413, "the request body is larger than the MCP endpoint accepts"],
  body_timeout: [408, "the request body did not arrive within mcp_http.body_timeout_ms"],
  body_not_json: [400, "the request body is not JSON"],
  store_unavailable: [503, "the store's socket does not answer"],
  store_connections_busy: [503, "every store connection of the MCP server is busy"],
} as const satisfies Record<string, readonly [number, string]>;

export type McpRefusalCode = keyof typeof MCP_REFUSALS;

export function mcpRefusal(code: McpRefusalCode, message?: string): SkeinError {
  const [status, text] = MCP_REFUSALS[code];
  return new SkeinError(code, message ?? text, { status });
}
