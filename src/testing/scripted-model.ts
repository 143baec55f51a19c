/**
 * A scripted OpenAI-compatible model server: a real HTTP server answering
 * `POST /v1/chat/completions` (plain JSON or, with `stream: true`, server-sent event chunks)
 * from a list of scripted replies, one per request, in order. A reply is final text or tool
 * calls, may wait `delay_ms` before answering (so a test can interrupt a slow call), and
 * reports token usage. Every request body is kept, so tests and the example can see exactly
 * which turns the agent sent. It exists for the agent worker's tests and the example under
 * `examples/agent`; it is not a model.
 */

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedToolCall {
  readonly id: string;
  readonly name: string;
  /** JSON text of the arguments. */
  readonly arguments: string;
}

export interface ScriptedReply {
  readonly content?: string;
  readonly tool_calls?: readonly ScriptedToolCall[];
  readonly delay_ms?: number;
  /** total tokens reported for this reply; default 10. */
  readonly tokens?: number;
}

export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly { role: string; content?: string | null; [k: string]: unknown }[];
  readonly stream?: boolean;
  readonly tools?: unknown[];
}

export interface ScriptedModel {
  readonly url: string;
  /** Request bodies received, in order (including ones whose caller went away). */
  readonly requests: ChatRequest[];
  /** When each request arrived (`performance.now()`), by the same index: for benchmarks. */
  readonly arrivals: number[];
  /** Appends replies to the script. */
  push(...replies: ScriptedReply[]): void;
  close(): Promise<void>;
}

function message(reply: ScriptedReply) {
  return {
    role: "assistant",
    content: reply.content ?? null,
    ...(reply.tool_calls === undefined
      ? {}
      : {
          tool_calls: reply.tool_calls.map((c) => ({
            id: c.id,
            type: "function",
            function: { name: c.name, arguments: c.arguments },
          })),
        }),
  };
}

/** Starts the server on 127.0.0.1 (port 0: any free port). */
export async function startScriptedModel(
  replies: readonly ScriptedReply[] = [],
  port = 0,
): Promise<ScriptedModel> {
  const script = [...replies];
  const requests: ChatRequest[] = [];
  const arrivals: number[] = [];
  let served = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "not found" } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatRequest;
      requests.push(body);
      arrivals.push(performance.now());
      const reply = script[served++];
      if (reply === undefined) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "the script has no more replies" } }));
        return;
      }
      const timer = setTimeout(() => answer(body, reply, res), reply.delay_ms ?? 0);
      res.on("close", () => clearTimeout(timer));
    });
  });
  const answer = (
    body: ChatRequest,
    reply: ScriptedReply,
    res: import("node:http").ServerResponse,
  ) => {
    const id = `chatcmpl-${served}`;
    const usage = {
      prompt_tokens: 0,
      completion_tokens: reply.tokens ?? 10,
      total_tokens: reply.tokens ?? 10,
    };
    const finish = reply.tool_calls === undefined ? "stop" : "tool_calls";
    if (body.stream !== true) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id,
          object: "chat.completion",
          model: body.model,
          choices: [{ index: 0, message: message(reply), finish_reason: finish }],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (delta: unknown, finishReason: string | null, withUsage = false) =>
      res.write(
        `data: ${JSON.stringify({
          id,
          object: "chat.completion.chunk",
          model: body.model,
          choices: [{ index: 0, delta, finish_reason: finishReason }],
          ...(withUsage ? { usage } : {}),
        })}\n\n`,
      );
    send({ role: "assistant" }, null);
    // Text arrives in pieces, as a real stream does.
    for (const piece of (reply.content ?? "").match(/.{1,8}/gs) ?? [])
      send({ content: piece }, null);
    reply.tool_calls?.forEach((c, index) => {
      send(
        {
          tool_calls: [
            {
              index,
              id: c.id,
              type: "function",
              function: { name: c.name, arguments: c.arguments },
            },
          ],
        },
        null,
      );
    });
    send({}, finish, true);
    res.end("data: [DONE]\n\n");
  };
  await new Promise<void>((done) => server.listen(port, "127.0.0.1", done));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}/v1`,
    requests,
    arrivals,
    push: (...more) => script.push(...more),
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
