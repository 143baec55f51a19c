/**
 * The MCP server the endpoint answers with (the SDK's `Server`): its tools and resources act
 * through the HTTP routes as the caller of each request, whose bearer and scope reach every
 * handler as the SDK's `authInfo` (so one server can serve a session's many requests, each
 * with its own bearer). Without a session a request is answered by a fresh server and a
 * stateless transport (`answerMcp`): JSON, except for a `tools/call` that asks for progress
 * (`_meta.progressToken`), answered as an SSE stream carrying progress notifications while
 * the tool waits, then the result. A session's server (sessions.ts) also announces
 * `listChanged` and resource subscriptions. A tool refused by its route is an MCP tool error
 * (`isError`) whose text is `{"error": {code, message}}` with the server's code; only an
 * unknown tool or a malformed request is a JSON-RPC error. Every tool call is metered.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
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
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { FastifyInstance } from "fastify";
import { isCodedError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import { checkParams, type McpMethod } from "../../common/mcp-params.ts";
import { describeTool } from "../../common/mcp-tool.ts";
import { VERSION } from "../../common/version.ts";
import type { Principal } from "../auth/tokens.ts";
import { metered, type ToolMeter } from "../metrics/mcp-tools.ts";
import { listResources, RESOURCE_TEMPLATES, readResource, runOfResource } from "./resources.ts";
import { routesAs } from "./routes.ts";
import { RUN_TOOL_PREFIX, runToolNamed, runTools } from "./run-tools.ts";
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

/** What every MCP server of the endpoint acts with. */
export interface McpRoles {
  /** Tools call its routes, in process, as the caller. */
  readonly app: FastifyInstance;
  readonly log: Logger;
  readonly meter: ToolMeter;
}

/** The signed-in caller of one request. */
export interface McpCaller {
  readonly token: string;
  readonly principal: Principal;
  /** The namespace the endpoint URL names (`?namespace=`). */
  readonly scope: string | undefined;
}

/** The caller as the SDK carries it to the handlers (`req.auth` → `extra.authInfo`). */
export function authInfo(caller: McpCaller): AuthInfo {
  return {
    token: caller.token,
    clientId: caller.principal.subject,
    scopes: [],
    expiresAt: caller.principal.expiresAt,
    extra: { scope: caller.scope },
  };
}

function contextOf(roles: McpRoles, auth: AuthInfo | undefined): ToolContext {
  // The endpoint sets `auth` on every request it hands the transport.
  const { token, extra } = auth!;
  return {
    routes: routesAs(roles.app, token),
    scope: extra?.scope as string | undefined,
    progress: () => {},
  };
}

/** What a session adds to its server: resource subscriptions (subscriptions.ts). */
export interface Subscriptions {
  /** Follows the run of `uri` (already read as the caller); refuses past its bound. */
  subscribe(uri: string, run: { namespace: string; runId: string }): void;
  unsubscribe(uri: string): void;
}

export function mcpServer(roles: McpRoles, subscriptions?: Subscriptions): Server {
  const session = subscriptions !== undefined;
  const server = new Server(
    { name: "skein", version: VERSION },
    {
      capabilities: {
        // Only a session has a channel (its GET stream) for the server to notify on.
        tools: { listChanged: session },
        resources: { subscribe: session, listChanged: false },
      },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: VALIDATOR,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => ({
    tools: [...TOOLS, ...(await runTools(contextOf(roles, extra.authInfo)))].map(describeTool),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const { name, arguments: args = {} } = request.params;
    const fixed = FIXED.get(name);
    const tool = fixed ?? runToolNamed(name);
    // A label of a fixed set: a name the caller chose never becomes one.
    const label =
      fixed !== undefined ? name : tool !== undefined ? `${RUN_TOOL_PREFIX}<name>` : "unknown";
    return metered(roles.meter, label, async () => {
      if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `no tool named ${name}`);
      const base = contextOf(roles, extra.authInfo);
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
      return callTool(tool, args, context, roles.log);
    });
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: RESOURCE_TEMPLATES,
  }));
  server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) => ({
    resources: await listResources(contextOf(roles, extra.authInfo)),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
    readResource(contextOf(roles, extra.authInfo), request.params.uri),
  );
  if (subscriptions !== undefined) {
    server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
      const { uri } = request.params;
      // Read as the caller first: a run it may not see is "not found", as a read is.
      subscriptions.subscribe(uri, await runOfResource(contextOf(roles, extra.authInfo), uri));
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
      subscriptions.unsubscribe(request.params.uri);
      return {};
    });
  }
  return server;
}

/** True for a `tools/call` whose caller asked for progress: answered as an SSE stream. */
function streamsProgress(body: unknown): boolean {
  const message = body as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } };
  return message?.method === "tools/call" && message.params?._meta?.progressToken !== undefined;
}

/** The methods a stateless server answers; a session's also answers (un)subscribe. */
const METHODS: readonly McpMethod[] = [
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
];
export const SESSION_METHODS: readonly McpMethod[] = [
  ...METHODS,
  "resources/subscribe",
  "resources/unsubscribe",
];

/** Answers one parsed JSON-RPC body without a session, on `response`. */
export async function answerMcp(
  request: IncomingMessage,
  response: ServerResponse,
  body: unknown,
  roles: McpRoles,
): Promise<void> {
  const server = mcpServer(roles);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !streamsProgress(body),
  });
  // Closing the server closes its transport.
  response.once("close", () => void server.close());
  await server.connect(transport);
  checkParams(transport, METHODS);
  await transport.handleRequest(request, response, body);
}
