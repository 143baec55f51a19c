/**
 * `skein-store mcp-http ABSOLUTE_PATH`: the HTTP MCP endpoint, a separate process reading
 * the service file's `mcp_http` object. The path must be absolute and the file at most
 * 1048576 bytes; the whole service file is decoded, then `mcp_http` (required here) with its
 * full listener policy. Every refusal of the policy is `mcp_http_config_invalid`. It then
 * listens on the loopback address and stops cleanly on SIGINT or SIGTERM; the MCP routes at
 * `mcp_http.path` are added on this listener by the MCP modules.
 */

import { isAbsolute } from "node:path";
import { type Command, parseOptions } from "../../common/cli.ts";
import { child, parseJson } from "../../common/decode/index.ts";
import { SkeinError } from "../../common/errors.ts";
import { createLogger, type Logger } from "../../common/log.ts";
import { readConfigFile } from "../config/files.ts";
import { CONFIG_FILE_MAX_BYTES } from "../config/limits.ts";
import { mcpHttpPolicy } from "../config/mcp-http.ts";
import { MCP_HTTP_CONFIG_INVALID, MCP_HTTP_CONFIG_MESSAGE } from "../config/refusals.ts";
import { serviceFile } from "../config/service-file.ts";
import type { McpHttpPolicy, StoreServiceConfig } from "../config/types.ts";
import { startLoopbackHttp } from "../loopback-http.ts";
import { reportRefusals } from "./refusal.ts";
import { stopSignal, stopWhen } from "./signals.ts";

export interface McpHttpStartup {
  readonly service: StoreServiceConfig;
  readonly policy: McpHttpPolicy;
}

function invalid(reason: string): SkeinError {
  return new SkeinError(MCP_HTTP_CONFIG_INVALID, `${MCP_HTTP_CONFIG_MESSAGE}: ${reason}`);
}

/** Every check `mcp-http` makes before it listens; throws a SkeinError. */
export async function loadMcpHttp(path: string): Promise<McpHttpStartup> {
  if (!isAbsolute(path)) {
    throw invalid(`the configuration path must be absolute, found ${JSON.stringify(path)}`);
  }
  let text: string;
  try {
    text = await readConfigFile(path, CONFIG_FILE_MAX_BYTES);
  } catch (error) {
    throw invalid((error as Error).message);
  }
  const raw = parseJson(text);
  const service = serviceFile.run(raw, undefined);
  if (service.mcp_http === null) throw invalid("mcp_http: mcp-http requires an mcp_http object");
  const policy = mcpHttpPolicy.run(
    (raw as { mcp_http: unknown }).mcp_http,
    child(undefined, "mcp_http"),
  );
  return { service, policy };
}

export interface McpHttpDeps {
  readonly logger?: () => Logger;
  readonly until?: () => Promise<unknown>;
}

export function mcpHttpCommand(deps: McpHttpDeps = {}): Command {
  return {
    name: "mcp-http",
    summary: "run the HTTP MCP endpoint from the service file's mcp_http object",
    help: "ABSOLUTE_PATH\n\n  ABSOLUTE_PATH  the service file (JSON, at most 1048576 bytes)\n",
    run: (args, io) =>
      reportRefusals("mcp-http", io, async () => {
        const { positionals } = parseOptions(args, {}, { min: 1, max: 1 });
        const { policy } = await loadMcpHttp(positionals[0]!);
        const log = (deps.logger ?? (() => createLogger({ name: "skein-store-mcp" })))();
        // Listen for the stop signal before the listener exists: a signal that arrives as
        // soon as the socket appears must still stop the service cleanly.
        const stop = deps.until ? stopWhen(deps.until) : stopSignal();
        let http: Awaited<ReturnType<typeof startLoopbackHttp>>;
        try {
          http = await startLoopbackHttp({
            listen: policy.listen,
            maxConnections: policy.max_connections,
            log,
            service: "mcp-http",
          });
        } catch (error) {
          stop.dispose();
          const reason = (error as NodeJS.ErrnoException).code ?? String(error);
          throw invalid(`mcp_http.listen: cannot listen (${reason})`);
        }
        await stop.stopped;
        await http.close();
        return 0;
      }),
  };
}
