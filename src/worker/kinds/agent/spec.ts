/**
 * The agent kind's action document: the model endpoint, its key's environment variable, the
 * system prompt, the tools (the document's other actions), the budgets and the capabilities
 * the action advertises to interventions. Decoded once when the worker document is read.
 */

import {
  array,
  boolean,
  type Decoded,
  nullable,
  object,
  oneOf,
  optional,
  string,
  stringMap,
  u32,
  u64,
  withDefault,
} from "../../../common/decode/index.ts";
import { CAPABILITIES } from "../../../protocol/agent-transport/interventions.ts";
import type { Handler } from "../../handler.ts";
import type { ToolAnswer } from "./mcp/answer.ts";
import { mcpServerSpec } from "./mcp/spec.ts";

/** An MCP server's key: its tools reach the model as `KEY_TOOL`. */
const serverKey = string({
  pattern: /^[A-Za-z0-9][A-Za-z0-9-]{0,31}$/,
  patternReason: "must be 1 to 32 letters, digits or '-', starting with a letter or digit",
});

export const agentSpec = object({
  base_url: string({ minBytes: 1 }),
  model: string({ minBytes: 1 }),
  /** Name of the environment variable holding the API key; absent: no key is sent. */
  api_key_env: optional(string({ minBytes: 1 })),
  system: withDefault(string(), ""),
  /** Tool action names; absent: every other action of the document. */
  tools: optional(array(string({ minBytes: 1 }))),
  max_tokens: withDefault(nullable(u64({ min: 1 })), null),
  max_turns: withDefault(u32({ min: 1, max: 10_000 }), 16),
  /** Ask for server-sent event chunks (`stream: true`) instead of one JSON reply. */
  stream: withDefault(boolean(), false),
  capabilities: withDefault(array(oneOf(CAPABILITIES)), [...CAPABILITIES]),
  /** MCP servers whose tools the agent may call, by key (mcp/spec.ts). */
  mcp: withDefault(stringMap(mcpServerSpec, { max: 16, key: serverKey }), new Map()),
});
export type AgentSpec = Decoded<typeof agentSpec>;

interface ToolBase {
  readonly name: string;
  readonly description: string;
  readonly approval: boolean;
  /** The JSON Schema of the arguments offered to the model; absent: any object. */
  readonly parameters?: Record<string, unknown>;
}

/** One of the document's `exec` actions. */
export interface ExecTool extends ToolBase {
  readonly kind: "exec";
  readonly handler: Handler;
}

/** A tool of one of the action's MCP servers (mcp/tools.ts), for one attempt. */
export interface McpTool extends ToolBase {
  readonly kind: "mcp";
  readonly server: string;
  /** The tool's own name on its server. */
  readonly tool: string;
  call(args: Record<string, unknown>, signal: AbortSignal): Promise<ToolAnswer>;
}

export type ToolSpec = ExecTool | McpTool;
