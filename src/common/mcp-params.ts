/**
 * The params of every JSON-RPC request an MCP server of ours answers (the store's mcp-http
 * and `skein serve`'s /mcp), decoded against its method's schema before the SDK's `Server`
 * dispatches it. The SDK (1.32) parses params only while
 * dispatching and lets that parse failure out as an untyped error, which it answers -32603,
 * internal error (modelcontextprotocol/typescript-sdk#2284): `tools/call` with
 * `arguments: "x"` told the caller the server broke. JSON-RPC 2.0 answers invalid params
 * -32602, so a request whose params do not fit is answered here, on the same transport, and
 * never reaches the Server. Tool arguments that fit the schema but not the tool stay the
 * tool's refusal (a tool error carrying the service's code). Each server names the methods
 * it answers; a method it does not answer is left to the Server (-32601).
 */

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

interface RequestSchema {
  safeParse(
    value: unknown,
  ): { success: true } | { success: false; error: { issues: readonly Issue[] } };
}

interface Issue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/** Each method a server of ours may answer, and its request schema. */
const SCHEMAS = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
  "resources/list": ListResourcesRequestSchema,
  "resources/templates/list": ListResourceTemplatesRequestSchema,
  "resources/read": ReadResourceRequestSchema,
  "resources/subscribe": SubscribeRequestSchema,
  "resources/unsubscribe": UnsubscribeRequestSchema,
} satisfies Record<string, RequestSchema>;

export type McpMethod = keyof typeof SCHEMAS;

/** The first problem of a failed parse, by path; never the value (it may carry a document). */
function problem(method: string, issues: readonly Issue[]): string {
  const first = issues[0];
  const where = first === undefined ? "params" : first.path.map(String).join(".") || "params";
  return `invalid params for ${method}: ${where}: ${first?.message ?? "does not fit"}`;
}

/**
 * Puts the params check of `methods` (those the server answers) in front of the Server that
 * `connect` attached to `transport`.
 */
export function checkParams(transport: Transport, methods: readonly McpMethod[]): void {
  const requests = new Map<string, RequestSchema>(methods.map((m) => [m, SCHEMAS[m]]));
  const dispatch = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message)) {
      const parsed = requests.get(message.method)?.safeParse(message);
      if (parsed !== undefined && !parsed.success) {
        const error = {
          code: ErrorCode.InvalidParams,
          message: problem(message.method, parsed.error.issues),
        };
        void transport.send({ jsonrpc: "2.0", id: message.id, error });
        return;
      }
    }
    dispatch?.(message, extra);
  };
}
