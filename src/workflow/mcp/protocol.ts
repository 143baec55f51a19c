/**
 * One MCP request, answered with the SDK's Streamable HTTP transport in its stateless mode:
 * a fresh `Server` and transport per request (a stateless transport serves one), whose tools
 * and resources act through the HTTP routes as the caller. The answer is JSON, except for a
 * `tools/call` that asks for progress (`_meta.progressToken`): that one is an SSE stream
 * carrying progress notifications while the tool waits, then the result. A tool refused by
 * its route is an MCP tool error (`isError`) whose text is `{"error": {code, message}}`
 * with the server's code; only an unknown tool or a malformed request is a JSON-RPC error.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { isCodedError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import { describeTool } from "../../common/mcp-tool.ts";
import { VERSION } from "../../common/version.ts";
import { listResources, RESOURCE_TEMPLATES, readResource } from "./resources.ts";
import type { RouteCall } from "./routes.ts";
import { runToolNamed, runTools } from "./run-tools.ts";
import type { Tool, ToolArgs, ToolContext } from "./tool.ts";
import { TOOLS } from "./tools.ts";

const INSTRUCTIONS =
  "Skein's durable workflow server. Each run_<name> tool runs one workflow with its input; " +
  "workflow_start and workflow_describe (with wait_ms, instead of polling) start and follow any " +
  "run; attempts_list, transcript_read and intervene watch and steer the agents a run started " +
  "(answer their pending approvals as reviewer). A refused call returns {error: {code, message}}.";

/**
 * One schema validator for every request's Server: the SDK makes a new Ajv per Server
 * otherwise (the largest cost of a call in the store's bench:mcp).
 */
const VALIDATOR = new AjvJsonSchemaValidator();

const FIXED = new Map(TOOLS.map((tool) => [tool.name, tool]));

async function callTool(
  tool: Tool,
  args: ToolArgs,
  context: ToolContext,
  log: Logger,
): Promise<CallToolResult> {
  try {
    const { text, value } = await tool.call(args, context);
    return { content: [{ type: "text", text }], structuredContent: value };
  } catch (error) {
    if (!isCodedError(error)) throw error;
    if ((error as { status?: number }).status === 500) {
      log.error({ err: error, tool: tool.name }, "an MCP tool's route failed");
    }
    const refusal = { error: { code: error.code, message: error.message } };
    return { isError: true, content: [{ type: "text", text: JSON.stringify(refusal) }] };
  }
}

export interface McpCaller {
  readonly routes: RouteCall;
  readonly scope: string | undefined;
  readonly log: Logger;
}

function mcpServer(caller: McpCaller): Server {
  const server = new Server(
    { name: "skein", version: VERSION },
    {
      capabilities: {
        tools: { listChanged: false },
        resources: { subscribe: false, listChanged: false },
      },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: VALIDATOR,
    },
  );
  const base: ToolContext = { routes: caller.routes, scope: caller.scope, progress: () => {} };
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...TOOLS, ...(await runTools(base))].map(describeTool),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const { name, arguments: args = {} } = request.params;
    const tool = FIXED.get(name) ?? runToolNamed(name);
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `no tool named ${name}`);
    const token = request.params._meta?.progressToken;
    const context: ToolContext =
      token === undefined
        ? base
        : {
            ...base,
            progress: (progress, total, message) =>
              void extra
                .sendNotification({
                  method: "notifications/progress",
                  params: { progressToken: token, progress, total, message },
                })
                .catch(() => {}),
          };
    return callTool(tool, args, context, caller.log);
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: RESOURCE_TEMPLATES,
  }));
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: await listResources(base),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) =>
    readResource(base, request.params.uri),
  );
  return server;
}

/** True for a `tools/call` whose caller asked for progress: answered as an SSE stream. */
function streamsProgress(body: unknown): boolean {
  const message = body as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } };
  return message?.method === "tools/call" && message.params?._meta?.progressToken !== undefined;
}

/** Answers one parsed JSON-RPC body on `response`. */
export async function answerMcp(
  request: IncomingMessage,
  response: ServerResponse,
  body: unknown,
  caller: McpCaller,
): Promise<void> {
  const server = mcpServer(caller);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !streamsProgress(body),
  });
  // Closing the server closes its transport.
  response.once("close", () => void server.close());
  await server.connect(transport);
  await transport.handleRequest(request, response, body);
}
