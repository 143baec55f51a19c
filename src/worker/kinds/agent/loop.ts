/**
 * The `agent` kind: an action is an LLM agent loop against an OpenAI-compatible
 * chat-completions endpoint. The system prompt and the attempt's input (as the first user
 * turn) open the conversation; the model may call tools, which are the document's other
 * actions (an `approval: required` tool waits for a RespondToApproval control); the loop ends
 * with the model's final answer, which is the output (a JSON string), or fails when a budget
 * (`max_tokens` total tokens reported by the model, `max_turns` model calls) is spent. Each
 * model turn, tool call and result, approval and control goes to the attempt's transcript,
 * and the attempt is announced over the agent transport with the capabilities its action
 * advertises, so interventions reach it: a Normal message is queued as the next user turn,
 * an Interrupt aborts the model call in flight and is sent at once, PauseResume holds the loop
 * between steps, UpdateBudget changes the limits, Cancel ends the attempt (cancelled,
 * not retried). The action document is spec.ts, interventions controls.ts, the model client
 * chat-completions.ts.
 */

import type { TranscriptEntry } from "../../../protocol/agent-transport/messages.ts";
import type { AgentLink } from "../../agent-link.ts";
import { type ActivityContext, ActivityError, abortError, type Handler } from "../../handler.ts";
import { type ChatMessage, complete } from "./chat-completions.ts";
import { Interrupted, LoopState, prepareControl, waitForPoke } from "./controls.ts";
import { TRANSCRIPT_ARGUMENTS_MAX_BYTES } from "./mcp/spec.ts";
import { type McpServer, type OpenMcp, openMcp } from "./mcp/tools.ts";
import type { AgentSpec, ToolSpec } from "./spec.ts";

export function agentHandler(
  spec: AgentSpec,
  tools: readonly ToolSpec[],
  servers: readonly McpServer[],
  link: AgentLink | undefined,
): Handler {
  return async (inputJson, ctx) => {
    const ref = { run_id: ctx.runId, activity_id: ctx.activityId, attempt: ctx.attempt };
    const record = (entry: TranscriptEntry) => link?.record(ref, entry);
    const state = new LoopState(spec);
    const cancel = new AbortController();
    const onAbort = () => cancel.abort(ctx.signal.reason);
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    link?.register({
      ref,
      namespace: ctx.namespace,
      workflowId: ctx.workflowId,
      capabilities: spec.capabilities,
      prepare: (control) => prepareControl(control, state, cancel, record),
    });
    let mcp: OpenMcp | undefined;
    try {
      const input = JSON.parse(inputJson) as unknown;
      // Listed once per attempt: a retry sees the tools the server has then.
      if (servers.length > 0) mcp = await openMcp(servers, input, ctx, cancel.signal, record);
      const all = mcp === undefined ? tools : [...tools, ...mcp.tools];
      return await loop(spec, all, input, ctx, state, cancel.signal, record);
    } finally {
      ctx.signal.removeEventListener("abort", onAbort);
      link?.end(ref);
      await mcp?.close();
    }
  };
}

async function loop(
  spec: AgentSpec,
  tools: readonly ToolSpec[],
  input: unknown,
  ctx: ActivityContext,
  state: LoopState,
  signal: AbortSignal,
  record: (e: TranscriptEntry) => void,
): Promise<string> {
  const first = typeof input === "string" ? input : JSON.stringify(input);
  const messages: ChatMessage[] = [];
  if (spec.system !== "") messages.push({ role: "system", content: spec.system });
  messages.push({ role: "user", content: first });
  record({ type: "user_turn", text: first, source: "input" });
  const key = spec.api_key_env === undefined ? undefined : process.env[spec.api_key_env];
  let turns = 0;
  let tokens = 0n;
  for (;;) {
    while (state.paused) await waitForPoke(state, signal);
    if (signal.aborted) throw abortError(signal);
    for (const text of state.queued.splice(0)) {
      messages.push({ role: "user", content: text });
      record({ type: "user_turn", text, source: "intervention" });
    }
    if (turns >= state.maxTurns) {
      record({ type: "end", reason: "max_turns", turns, tokens: undefined });
      throw new ActivityError("budget_exhausted", `max_turns ${state.maxTurns} reached`, {
        nonRetryable: true,
      });
    }
    if (state.maxTokens !== null && tokens >= state.maxTokens) {
      record({ type: "end", reason: "max_tokens", turns: undefined, tokens: Number(tokens) });
      throw new ActivityError("budget_exhausted", `max_tokens ${state.maxTokens} reached`, {
        nonRetryable: true,
      });
    }
    const inflight = new AbortController();
    state.inflight = inflight;
    let reply: { message: ChatMessage; tokens: number };
    try {
      reply = await complete(
        spec,
        key,
        messages,
        tools,
        AbortSignal.any([signal, inflight.signal]),
      );
    } catch (error) {
      if (signal.aborted) throw abortError(signal);
      if (inflight.signal.aborted && inflight.signal.reason instanceof Interrupted) {
        record({ type: "interrupted" });
        continue;
      }
      throw error;
    } finally {
      state.inflight = undefined;
    }
    turns++;
    tokens += BigInt(reply.tokens);
    ctx.heartbeat({ turns, tokens: Number(tokens) });
    messages.push(reply.message);
    record({
      type: "model_turn",
      content: reply.message.content,
      tool_calls: reply.message.tool_calls ?? [],
      tokens: reply.tokens,
    });
    const calls = reply.message.tool_calls ?? [];
    if (calls.length === 0) return JSON.stringify(reply.message.content ?? "");
    for (const call of calls) {
      messages.push({
        role: "tool",
        tool_call_id: call.id,
        content: await runTool(call, tools, ctx, state, signal, record),
      });
    }
  }
}

async function runTool(
  call: { id: string; function: { name: string; arguments: string } },
  tools: readonly ToolSpec[],
  ctx: ActivityContext,
  state: LoopState,
  signal: AbortSignal,
  record: (e: TranscriptEntry) => void,
): Promise<string> {
  const tool = tools.find((t) => t.name === call.function.name);
  record({
    type: "tool_call",
    call_id: call.id,
    name: call.function.name,
    arguments: capText(call.function.arguments, TRANSCRIPT_ARGUMENTS_MAX_BYTES),
    server: tool?.kind === "mcp" ? tool.server : undefined,
    tool: tool?.kind === "mcp" ? tool.tool : undefined,
  });
  if (tool === undefined) {
    const content = `error: no tool named ${JSON.stringify(call.function.name)}`;
    record({ type: "tool_result", call_id: call.id, content, is_error: undefined });
    return content;
  }
  if (tool.approval) {
    record({ type: "approval", call_id: call.id, state: "pending", note: undefined });
    const decision = await new Promise<{ approve: boolean; note: string | null }>((done, fail) => {
      state.approvals.set(call.id, done);
      signal.addEventListener("abort", () => fail(abortError(signal)), { once: true });
    });
    record({
      type: "approval",
      call_id: call.id,
      state: decision.approve ? "approved" : "denied",
      note: decision.note,
    });
    if (!decision.approve) {
      const content = `denied${decision.note === null ? "" : `: ${decision.note}`}`;
      record({ type: "tool_result", call_id: call.id, content, is_error: undefined });
      return content;
    }
  }
  let content: string;
  let isError = false;
  try {
    const args = call.function.arguments.trim() === "" ? "{}" : call.function.arguments;
    const parsed = JSON.parse(args) as unknown;
    if (tool.kind === "exec") {
      content = await tool.handler(args, { ...ctx, signal, action: tool.name });
    } else if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      content = "error: the arguments must be a JSON object";
      isError = true;
    } else {
      const answer = await tool.call(parsed as Record<string, unknown>, signal);
      content = answer.text;
      isError = answer.isError;
    }
  } catch (error) {
    if (signal.aborted) throw abortError(signal);
    content = `error: ${error instanceof Error ? error.message : String(error)}`;
    isError = true;
  }
  record({
    type: "tool_result",
    call_id: call.id,
    content,
    is_error: tool.kind === "mcp" ? isError : undefined,
  });
  return content;
}

/** Text cut to `max` bytes, marked: the transcript keeps what a reader needs, bounded. */
function capText(text: string, max: number): string {
  const bytes = Buffer.from(text, "utf8");
  return bytes.length <= max ? text : `${bytes.subarray(0, max).toString("utf8")}… [cut]`;
}
