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
  u32,
  u64,
  withDefault,
} from "../../../common/decode/index.ts";
import { CAPABILITIES } from "../../../protocol/agent-transport/interventions.ts";
import type { Handler } from "../../handler.ts";

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
});
export type AgentSpec = Decoded<typeof agentSpec>;

export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly approval: boolean;
  readonly handler: Handler;
}
