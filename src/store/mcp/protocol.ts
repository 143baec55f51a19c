/**
 * One MCP request, answered with the SDK's Streamable HTTP transport in its stateless JSON
 * mode: a fresh `Server` and transport per request (the SDK's stateless transport serves one
 * request), whose tools are the store's verbs on the caller's own store connection. A tool
 * the store refuses comes back as an MCP tool error (`isError`) whose text is
 * `{"error": {code, message}}` with the store's code, so an agent sees why and may act on it.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { isCodedError } from "../../common/errors.ts";
import { checkParams } from "../../common/mcp-params.ts";
import { VERSION } from "../../common/version.ts";
import type { StoreClient } from "../client/client.ts";
import { describeTool, offeredTools } from "./tools.ts";

const INSTRUCTIONS =
  "Skein's versioned document store. Collections hold documents by key on branches; every " +
  "write is a commit with a version. Branch before risky changes; use document_append_prune " +
  "as bounded memory. A refused call returns {error: {code, message}} with the store's code.";

/**
 * One schema validator for every request's Server: the SDK makes a new Ajv per Server
 * otherwise, which was the largest cost of a tool call in bench:mcp.
 */
const VALIDATOR = new AjvJsonSchemaValidator();

const json = JSON as typeof JSON & { rawJSON(text: string): unknown };

/** The value with integers beyond 2^53 (bigints) as exact JSON digits. */
function wireSafe(value: unknown): unknown {
  if (typeof value === "bigint") return json.rawJSON(value.toString());
  if (Array.isArray(value)) return value.map(wireSafe);
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    // defineProperty: an own "__proto__" key of a value stays an own key (an assignment
    // would set the copy's prototype instead and drop the key from the answer).
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, k, {
        value: wireSafe(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

/** Calls the tool's verb on the caller's connection; a refusal is a tool error. */
export async function callTool(
  client: StoreClient,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const tool = offeredTools(client.hello?.verbs ?? []).find((t) => t.name === name);
  if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `no tool named ${name}`);
  try {
    const result = wireSafe(await client.call(tool.verb, args)) as Record<string, unknown>;
    return {
      content: [{ type: "text", text: JSON.stringify(result) }],
      structuredContent: result,
    };
  } catch (error) {
    if (!isCodedError(error)) throw error;
    // The pass has expired: closing its connection makes the next request of this pass say
    // hello again, which the store refuses, so the caller gets a 401 and signs in anew.
    if (error.code === "pass_expired") void client.close();
    const refusal = { error: { code: error.code, message: error.message } };
    return { isError: true, content: [{ type: "text", text: JSON.stringify(refusal) }] };
  }
}

function mcpServer(client: StoreClient): Server {
  const server = new Server(
    { name: "skein-store", version: VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: VALIDATOR,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: offeredTools(client.hello?.verbs ?? []).map(describeTool),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) =>
    callTool(client, request.params.name, request.params.arguments ?? {}),
  );
  return server;
}

/** Answers one parsed JSON-RPC body on `response`. */
export async function answerMcp(
  request: IncomingMessage,
  response: ServerResponse,
  body: unknown,
  client: StoreClient,
): Promise<void> {
  const server = mcpServer(client);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  // Closing the server closes its transport.
  response.once("close", () => void server.close());
  await server.connect(transport);
  checkParams(transport, ["initialize", "ping", "tools/list", "tools/call"]);
  await transport.handleRequest(request, response, body);
}
