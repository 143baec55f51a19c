/**
 * The params of every JSON-RPC request the MCP server answers, decoded against its method's
 * schema before the SDK's `Server` dispatches it. The SDK (1.32) parses params only while
 * dispatching and lets that parse failure out as an untyped error, which it answers -32603,
 * internal error (modelcontextprotocol/typescript-sdk#2284): `tools/call` with
 * `arguments: "x"` told the caller the server broke. JSON-RPC 2.0 answers invalid params
 * -32602, so a request whose params do not fit is answered here, on the same transport, and
 * never reaches the Server. Tool arguments that fit the schema but not the verb stay the
 * store's refusal (`invalid_request`, a tool error).
 */

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  ListToolsRequestSchema,
  PingRequestSchema,
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

/** Each method the server answers (the SDK's own two, then ours) and its request schema. */
const REQUESTS = new Map<string, RequestSchema>([
  ["initialize", InitializeRequestSchema],
  ["ping", PingRequestSchema],
  ["tools/list", ListToolsRequestSchema],
  ["tools/call", CallToolRequestSchema],
]);

/** The first problem of a failed parse, by path; never the value (it may carry a document). */
function problem(method: string, issues: readonly Issue[]): string {
  const first = issues[0];
  const where = first === undefined ? "params" : first.path.map(String).join(".") || "params";
  return `invalid params for ${method}: ${where}: ${first?.message ?? "does not fit"}`;
}

/** Puts the params check in front of the Server that `connect` attached to `transport`. */
export function checkParams(transport: Transport): void {
  const dispatch = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message)) {
      const parsed = REQUESTS.get(message.method)?.safeParse(message);
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
