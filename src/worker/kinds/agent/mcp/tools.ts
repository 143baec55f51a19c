/**
 * The MCP side of an agent action. At document load each server of the action's `mcp` field
 * is prepared (its credential files read, its branch expression compiled); at each attempt's
 * start every server is opened and listed once, and the tools its allow-list names become
 * the model's tools `KEY_TOOL`, with the server's own JSON Schemas and the approval gates the
 * action names. A call goes through the attempt's branch pin, then to the server.
 */

import { resolve } from "node:path";
import type jsonata from "jsonata";
import type { TranscriptEntry } from "../../../../protocol/agent-transport/messages.ts";
import type { ActivityContext } from "../../../handler.ts";
import type { McpTool } from "../spec.ts";
import type { ToolAnswer } from "./answer.ts";
import { BranchPin, compileBranch } from "./branch.ts";
import { McpConnection } from "./connection.ts";
import { type PassSource, passSource } from "./passes.ts";
import type { McpServerSpec } from "./spec.ts";

export interface McpServer {
  readonly key: string;
  readonly spec: McpServerSpec;
  readonly passes: PassSource | undefined;
  readonly branch: jsonata.Expression | undefined;
}

/** Reads each server's credential files and compiles its branch expression (load time). */
export async function prepareMcpServers(
  servers: ReadonlyMap<string, McpServerSpec>,
  baseDir: string,
): Promise<McpServer[]> {
  const prepared: McpServer[] = [];
  for (const [key, spec] of servers) {
    prepared.push({
      key,
      spec,
      passes: await passSource(spec.auth, resolve(baseDir)),
      branch: spec.branch === undefined ? undefined : compileBranch(spec.branch),
    });
  }
  return prepared;
}

/** An attempt's open MCP servers: the tools they give the model, and how to close them. */
export interface OpenMcp {
  readonly tools: McpTool[];
  close(): Promise<void>;
}

export async function openMcp(
  servers: readonly McpServer[],
  input: unknown,
  ctx: ActivityContext,
  signal: AbortSignal,
  record: (entry: TranscriptEntry) => void,
): Promise<OpenMcp> {
  const connections: McpConnection[] = [];
  const close = async () => {
    await Promise.all(connections.map((c) => c.close()));
  };
  const tools: McpTool[] = [];
  try {
    for (const server of servers) {
      const connection = await McpConnection.open(server.key, server.spec, server.passes, signal);
      connections.push(connection);
      const pin =
        server.branch === undefined
          ? undefined
          : await BranchPin.evaluate(server.branch, input, ctx, connection, record);
      const allowed = server.spec.tools;
      for (const tool of connection.tools) {
        if (allowed !== undefined && !allowed.includes(tool.name)) continue;
        tools.push({
          kind: "mcp",
          name: `${server.key}_${tool.name}`,
          description: tool.description ?? tool.title ?? "",
          approval: server.spec.approval.includes(tool.name),
          parameters: tool.inputSchema,
          server: server.key,
          tool: tool.name,
          call: (args, callSignal) => callThrough(connection, pin, tool.name, args, callSignal),
        });
      }
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { tools, close };
}

async function callThrough(
  connection: McpConnection,
  pin: BranchPin | undefined,
  tool: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<ToolAnswer> {
  if (pin === undefined) return connection.call(tool, args, signal);
  const pinned = pin.pin(tool, args);
  if ("isError" in pinned) return pinned;
  if (pinned.pinned) await pin.ensure(pinned.args.collection, signal);
  return connection.call(tool, pinned.args, signal);
}
