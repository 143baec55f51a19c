/**
 * The error answers the agent worker itself gives the model for an MCP tool call, declared
 * once (docs/agents.md lists exactly these; test/worker/kinds/agent/mcp-errors.test.ts
 * checks both ways). They are tool results, not attempt failures: the model reads
 * `{"error": {code, message}}`, the same shape the store's mcp-http answers its refusals
 * with, and the attempt goes on.
 */

import type { ToolAnswer } from "./answer.ts";

export const MCP_TOOL_ERRORS = {
  branch_refused: "the call names a branch other than the attempt's pinned branch; not sent",
  mcp_call_failed: "the server could not be reached or answered the call with an HTTP error",
  mcp_timeout: "the server did not answer within the server's timeout_ms",
  mcp_result_too_large: "the server's answer was larger than max_result_bytes",
} as const;

export type McpToolError = keyof typeof MCP_TOOL_ERRORS;

export function toolError(code: McpToolError, message: string): ToolAnswer {
  return { text: JSON.stringify({ error: { code, message } }), isError: true, code };
}
