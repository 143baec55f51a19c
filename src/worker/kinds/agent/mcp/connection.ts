/**
 * One attempt's connection to one MCP server: the SDK's Streamable HTTP client, opened at
 * the attempt's start (initialize, then one `tools/list`), each request sent with the pass
 * of the moment (renewed and sent again once when the server answers 401), each call bounded
 * in time (`timeout_ms`, and the attempt's own cancellation) and each answer in size
 * (`max_result_bytes`, read as it arrives and cut off beyond). A failed call is a value the
 * model is answered with (`ToolAnswer`), never a thrown error: a store that stops mid-attempt
 * costs the agent that call, not the attempt.
 */

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { VERSION } from "../../../../common/version.ts";
import { ActivityError } from "../../../handler.ts";
import type { ToolAnswer } from "./answer.ts";
import { type McpToolError, toolError } from "./errors.ts";
import type { PassSource } from "./passes.ts";
import type { McpServerSpec } from "./spec.ts";

/** The most tools taken from one server's list (more are left off, with a warning entry). */
export const MCP_TOOLS_MAX = 256;

class BodyTooLarge extends Error {}

/**
 * A fetch that sends the pass of the moment, renews it once on a 401, and reads at most
 * `maxBytes` of an answer to a POST (the MCP messages; a GET is the server's event stream).
 */
function boundedFetch(passes: PassSource | undefined, maxBytes: number) {
  return async (url: string | URL, init: RequestInit = {}): Promise<Response> => {
    const send = async (): Promise<[Response, string | undefined]> => {
      const headers = new Headers(init.headers);
      const pass = passes === undefined ? undefined : await passes.get();
      if (pass !== undefined) headers.set("authorization", `Bearer ${pass}`);
      return [await fetch(url, { ...init, headers }), pass];
    };
    let [response, pass] = await send();
    if (response.status === 401 && pass !== undefined) {
      await response.body?.cancel();
      passes!.refused(pass);
      [response] = await send();
    }
    if ((init.method ?? "GET") !== "POST" || response.body === null) return response;
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > maxBytes) throw new BodyTooLarge(`the answer is larger than ${maxBytes} bytes`);
      chunks.push(chunk);
    }
    return new Response(Buffer.concat(chunks), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

export class McpConnection {
  readonly key: string;
  readonly spec: McpServerSpec;
  readonly #client: Client;
  readonly #passes: PassSource | undefined;
  /** Every tool the server listed (the allow-list filters what the model is offered). */
  tools: readonly Tool[] = [];

  private constructor(
    key: string,
    spec: McpServerSpec,
    client: Client,
    passes: PassSource | undefined,
  ) {
    this.key = key;
    this.spec = spec;
    this.#client = client;
    this.#passes = passes;
  }

  /** Connects and lists the tools; fails the attempt (retryably) when it cannot. */
  static async open(
    key: string,
    spec: McpServerSpec,
    passes: PassSource | undefined,
    signal: AbortSignal,
  ): Promise<McpConnection> {
    // The SDK is loaded by the first attempt that opens an MCP server, not by every `skein`
    // command that imports the worker (test/architecture/cli-startup.test.ts).
    const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    ]);
    const client = new Client({ name: "skein-agent", version: VERSION });
    const transport = new StreamableHTTPClientTransport(new URL(spec.url), {
      // Passes are ours to send: the SDK's own OAuth flow is for interactive clients.
      fetch: boundedFetch(passes, spec.max_result_bytes + 4096),
    });
    const connection = new McpConnection(key, spec, client, passes);
    const options = { signal, timeout: spec.timeout_ms };
    try {
      await client.connect(transport, options);
      const listed = await client.listTools(undefined, options);
      connection.tools = listed.tools.slice(0, MCP_TOOLS_MAX);
    } catch (error) {
      await client.close().catch(() => {});
      if (error instanceof ActivityError) throw error;
      if (signal.aborted) throw signal.reason;
      throw new ActivityError(
        "mcp_unavailable",
        `MCP server ${key} (${spec.url}): ${describe(error)}`,
      );
    }
    return connection;
  }

  /**
   * Calls a tool of this server; every failure is an error answer. A pass the store found
   * expired (its connection outlived the pass) is renewed and the call sent once more.
   */
  async call(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<ToolAnswer> {
    const answer = await this.#call(tool, args, signal);
    if (answer.code !== "pass_expired" || this.#passes === undefined) return answer;
    this.#passes.refused(undefined);
    return this.#call(tool, args, signal);
  }

  async #call(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<ToolAnswer> {
    let result: Awaited<ReturnType<Client["callTool"]>>;
    try {
      result = await this.#client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        timeout: this.spec.timeout_ms,
      });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (error instanceof ActivityError) throw error;
      return this.#failed(error);
    }
    const content = Array.isArray(result.content) ? result.content : [];
    const text = content
      .map((part) => (part.type === "text" ? part.text : JSON.stringify(part)))
      .join("\n");
    const isError = result.isError === true;
    return { text: cap(text, this.spec.max_result_bytes), isError, ...codeOf(text, isError) };
  }

  #failed(error: unknown): ToolAnswer {
    const name = error instanceof Error ? error.name : "";
    const kind: McpToolError =
      error instanceof BodyTooLarge || (error as { cause?: unknown })?.cause instanceof BodyTooLarge
        ? "mcp_result_too_large"
        : /timed? ?out/i.test(String((error as Error)?.message)) || name === "TimeoutError"
          ? "mcp_timeout"
          : "mcp_call_failed";
    return toolError(kind, `${this.key}: ${describe(error)}`);
  }

  close(): Promise<void> {
    return this.#client.close().catch(() => {});
  }
}

/** The store's code of an `isError` answer (`{"error": {"code"}}`), when it carries one. */
function codeOf(text: string, isError: boolean): { code?: string } {
  if (!isError) return {};
  try {
    const code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
    return typeof code === "string" ? { code } : {};
  } catch {
    return {};
  }
}

/** Text cut to `max` bytes, marked, so the model knows it did not see it all. */
function cap(text: string, max: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= max) return text;
  return `${bytes.subarray(0, max).toString("utf8")}… [cut at ${max} bytes]`;
}

/** An error's message, bounded; the SDK's messages name statuses and server text, not our pass. */
function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 512 ? `${message.slice(0, 512)}…` : message;
}
