/**
 * The MCP endpoint's tool calls in `skein_mcp_tool_seconds`: each call timed from its
 * arrival to its result, by tool and outcome. The endpoint hands every call to a ToolMeter
 * and knows nothing of Prometheus; the label of a tool is one of a fixed set (the fixed tools'
 * names, `run_<name>` for every definition's tool, `unknown` for a name no tool has), so a
 * caller choosing names cannot create label values.
 */

import type { WorkflowMetrics } from "./registry.ts";

/** `ok`: a result; `refused`: a tool error with a code; `error`: a JSON-RPC error or a fault. */
export type ToolOutcome = "ok" | "refused" | "error";

export type ToolMeter = (tool: string, outcome: ToolOutcome, seconds: number) => void;

export function toolMeter(metrics: WorkflowMetrics): ToolMeter {
  return (tool, outcome, seconds) => metrics.mcpTools.observe({ tool, outcome }, seconds);
}

/** Times `call` into `meter` under `tool`, its outcome read from its result or throw. */
export async function metered<T extends { isError?: boolean }>(
  meter: ToolMeter,
  tool: string,
  call: () => Promise<T>,
): Promise<T> {
  const started = process.hrtime.bigint();
  const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
  try {
    const result = await call();
    meter(tool, result.isError === true ? "refused" : "ok", seconds());
    return result;
  } catch (error) {
    meter(tool, "error", seconds());
    throw error;
  }
}
