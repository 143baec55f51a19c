/**
 * The agent kind's model client: one OpenAI-compatible chat-completions call, plain or
 * streamed (`stream: true`, server-sent events read with `eventsource-parser`). A model
 * endpoint's error status or a reply without a choice fails the attempt with `model_error`
 * (retryable); the reply is the assistant's message and the total tokens the model reported.
 */

import { createParser } from "eventsource-parser";
import { ActivityError } from "../../handler.ts";
import type { AgentSpec } from "./spec.ts";

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** One chat-completions call, plain or streamed. */
export async function complete(
  spec: Pick<AgentSpec, "base_url" | "model" | "stream">,
  key: string | undefined,
  messages: readonly ChatMessage[],
  tools: readonly {
    readonly name: string;
    readonly description: string;
    readonly parameters?: Record<string, unknown>;
  }[],
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
                parameters: t.parameters ?? { type: "object", additionalProperties: true },
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

/**
 * Assembles a streamed reply: text pieces joined, tool calls merged by index. The events are
 * read by a server-sent events parser, so every line ending the format allows (LF, CRLF, CR)
 * ends an event as it arrives.
 */
async function readStream(response: Response): Promise<{ message: ChatMessage; tokens: number }> {
  let content = "";
  let sawContent = false;
  let tokens = 0;
  const calls: { id: string; type: "function"; function: { name: string; arguments: string } }[] =
    [];
  const take = (data: string) => {
    if (data === "[DONE]" || data.trim() === "") return;
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
  };
  const parser = createParser({ onEvent: (event) => take(event.data) });
  const decoder = new TextDecoder();
  for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(bytes, { stream: true }));
  }
  // A last event without its blank line still counts (the format drops it; replies end so).
  parser.feed("\n\n");
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
