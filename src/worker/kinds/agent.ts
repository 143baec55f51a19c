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
 * not retried).
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
} from "../../common/decode/index.ts";
import { CAPABILITIES, type Outcome } from "../../protocol/agent-transport/interventions.ts";
import type { Control, TranscriptEntry } from "../../protocol/agent-transport/messages.ts";
import type { AgentLink, Prepared } from "../agent-link.ts";
import { type ActivityContext, ActivityError, abortError, type Handler } from "../handler.ts";

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

interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

class Interrupted extends Error {}

/** Mutable state of one running attempt, changed by controls between and during steps. */
class LoopState {
  paused = false;
  maxTokens: bigint | null;
  maxTurns: number;
  readonly queued: string[] = [];
  readonly approvals = new Map<string, (d: { approve: boolean; note: string | null }) => void>();
  inflight: AbortController | undefined;
  wake: (() => void) | undefined;

  constructor(spec: AgentSpec) {
    this.maxTokens = spec.max_tokens;
    this.maxTurns = spec.max_turns;
  }

  poke(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}

export function agentHandler(
  spec: AgentSpec,
  tools: readonly ToolSpec[],
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
    try {
      return await loop(spec, tools, inputJson, ctx, state, cancel.signal, record);
    } finally {
      ctx.signal.removeEventListener("abort", onAbort);
      link?.end(ref);
    }
  };
}

/**
 * Whether a control can be applied to the attempt now, and how: the outcome when it cannot,
 * else what applies it once the server commits it (see agent-link.ts). A pending approval is
 * reserved meanwhile, so two answers to one call cannot both be ready.
 */
function prepareControl(
  control: Control,
  state: LoopState,
  cancel: AbortController,
  record: (e: TranscriptEntry) => void,
): Exclude<Outcome, "Applied"> | Prepared {
  if (cancel.signal.aborted) return "StaleTarget";
  const kind = control.kind;
  const held = (effect: () => void, release = () => {}): Prepared => ({
    release,
    apply: () => {
      if (cancel.signal.aborted) return;
      record({ type: "control", control });
      effect();
      state.poke();
    },
  });
  if (kind.kind !== "RespondToApproval") return held(() => applyControl(kind, state, cancel));
  const pending = state.approvals.get(kind.call_id);
  // No tool call waits under that id: the target is not (or no longer) there.
  if (pending === undefined) return "StaleTarget";
  state.approvals.delete(kind.call_id);
  return held(
    () => pending({ approve: kind.decision.decision === "Approve", note: kind.note }),
    () => {
      if (!cancel.signal.aborted) state.approvals.set(kind.call_id, pending);
    },
  );
}

type StateKind = Exclude<Control["kind"], { kind: "RespondToApproval" }>;

function applyControl(kind: StateKind, state: LoopState, cancel: AbortController): void {
  switch (kind.kind) {
    case "Cancel":
      // The code says `cancelled`; the run reads `cancelled: <reason>` from code and message.
      cancel.abort(new ActivityError("cancelled", kind.reason, { nonRetryable: true }));
      return;
    case "InjectMessage":
      state.queued.push(kind.text);
      if (kind.priority.priority === "Interrupt") state.inflight?.abort(new Interrupted());
      return;
    case "PauseResume":
      state.paused = kind.paused;
      return;
    case "UpdateBudget":
      if (kind.max_tokens !== null) state.maxTokens = kind.max_tokens;
      if (kind.max_turns !== null) state.maxTurns = kind.max_turns;
      return;
  }
}

/** Resolves when poked (a control arrived) or the attempt is cancelled. */
function waitForPoke(state: LoopState, signal: AbortSignal): Promise<void> {
  return new Promise((done, fail) => {
    if (signal.aborted) return fail(abortError(signal));
    const onAbort = () => fail(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    state.wake = () => {
      signal.removeEventListener("abort", onAbort);
      done();
    };
  });
}

async function loop(
  spec: AgentSpec,
  tools: readonly ToolSpec[],
  inputJson: string,
  ctx: ActivityContext,
  state: LoopState,
  signal: AbortSignal,
  record: (e: TranscriptEntry) => void,
): Promise<string> {
  const input = JSON.parse(inputJson) as unknown;
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
    arguments: call.function.arguments,
  });
  if (tool === undefined) {
    const content = `error: no tool named ${JSON.stringify(call.function.name)}`;
    record({ type: "tool_result", call_id: call.id, content });
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
      record({ type: "tool_result", call_id: call.id, content });
      return content;
    }
  }
  let content: string;
  try {
    const args = call.function.arguments.trim() === "" ? "{}" : call.function.arguments;
    JSON.parse(args);
    content = await tool.handler(args, { ...ctx, signal, action: tool.name });
  } catch (error) {
    if (signal.aborted) throw abortError(signal);
    content = `error: ${error instanceof Error ? error.message : String(error)}`;
  }
  record({ type: "tool_result", call_id: call.id, content });
  return content;
}

/** One chat-completions call, plain or streamed. */
async function complete(
  spec: AgentSpec,
  key: string | undefined,
  messages: readonly ChatMessage[],
  tools: readonly ToolSpec[],
  signal: AbortSignal,
): Promise<{ message: ChatMessage; tokens: number }> {
  const response = await fetch(`${spec.base_url.replace(/\/$/, "")}/chat/completions`, {
    method: "POST",
    signal,
    headers: {
      "content-type": "application/json",
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify({
      model: spec.model,
      messages,
      ...(spec.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      ...(tools.length === 0
        ? {}
        : {
            tools: tools.map((t) => ({
              type: "function",
              function: {
                name: t.name,
                description: t.description,
                parameters: { type: "object", additionalProperties: true },
              },
            })),
          }),
    }),
  });
  if (response.ok && spec.stream) return readStream(response);
  const text = await response.text();
  if (!response.ok) {
    throw new ActivityError(
      "model_error",
      `model endpoint answered ${response.status}: ${text.slice(0, 512)}`,
    );
  }
  const body = JSON.parse(text) as {
    choices?: { message?: ChatMessage }[];
    usage?: { total_tokens?: number };
  };
  const message = body.choices?.[0]?.message;
  if (message === undefined) throw new ActivityError("model_error", "the reply has no choice");
  return {
    message: {
      role: "assistant",
      content: message.content ?? null,
      ...(message.tool_calls === undefined ? {} : { tool_calls: message.tool_calls }),
    },
    tokens: body.usage?.total_tokens ?? 0,
  };
}

interface StreamChunk {
  choices?: {
    delta?: {
      content?: string | null;
      tool_calls?: {
        index: number;
        id?: string;
        function?: { name?: string; arguments?: string };
      }[];
    };
  }[];
  usage?: { total_tokens?: number } | null;
}

/** Assembles a streamed reply: text pieces joined, tool calls merged by index. */
async function readStream(response: Response): Promise<{ message: ChatMessage; tokens: number }> {
  let content = "";
  let sawContent = false;
  let tokens = 0;
  const calls: { id: string; type: "function"; function: { name: string; arguments: string } }[] =
    [];
  const decoder = new TextDecoder();
  let buffer = "";
  const take = (event: string) => {
    for (const line of event.split("\n")) {
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]" || data === "") continue;
      const chunk = JSON.parse(data) as StreamChunk;
      if (typeof chunk.usage?.total_tokens === "number") tokens = chunk.usage.total_tokens;
      const delta = chunk.choices?.[0]?.delta;
      if (typeof delta?.content === "string") {
        content += delta.content;
        sawContent = true;
      }
      for (const part of delta?.tool_calls ?? []) {
        let call = calls[part.index];
        if (call === undefined) {
          call = { id: "", type: "function", function: { name: "", arguments: "" } };
          calls[part.index] = call;
        }
        if (part.id !== undefined) call.id = part.id;
        call.function.name += part.function?.name ?? "";
        call.function.arguments += part.function?.arguments ?? "";
      }
    }
  };
  for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      take(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
    }
  }
  take(buffer);
  const toolCalls = calls.filter((c) => c !== undefined);
  return {
    message: {
      role: "assistant",
      content: sawContent ? content : null,
      ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
    },
    tokens,
  };
}
