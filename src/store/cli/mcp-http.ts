/**
 * `skein-store mcp-http ABSOLUTE_PATH`: the HTTP MCP endpoint, a separate process reading
 * the service file's `mcp_http` object. The path must be absolute and the file at most
 * 1048576 bytes; the whole service file is decoded, then `mcp_http` (required here) with its
 * full listener policy. Every refusal of the policy is `mcp_http_config_invalid`. The file
 * must also configure `idp`: each request's bearer is a pass the store verifies, and without
 * an identity provider every bearer would act with the socket's whole authority. It then
 * serves MCP (src/store/mcp/) at `mcp_http.path` on the loopback address, calling the store
 * at its socket (`socket`, or the runtime directory's `<name>.sock` as `serve` places it),
 * and stops cleanly on SIGINT or SIGTERM.
 */

import { realpath } from "node:fs/promises";
import { basename, isAbsolute } from "node:path";
import { type Command, parseOptions } from "../../common/cli.ts";
import { child, parseJson } from "../../common/decode/index.ts";
import { SkeinError } from "../../common/errors.ts";
import { createLogger, type Logger } from "../../common/log.ts";
import { stopSignal, stopWhen } from "../../common/stop-signal.ts";
import { readConfigFile } from "../config/files.ts";
import { CONFIG_FILE_MAX_BYTES } from "../config/limits.ts";
import { mcpHttpPolicy } from "../config/mcp-http.ts";
import { serviceFile } from "../config/service-file.ts";
import type { McpHttpPolicy, StoreServiceConfig } from "../config/types.ts";
import { MCP_HTTP_CONFIG_INVALID, MCP_HTTP_CONFIG_MESSAGE } from "../errors.ts";
import type { LoopbackHttp } from "../loopback-http.ts";
import { resolveRuntimeDir } from "../startup/runtime-dir.ts";
import { socketPathFor } from "../startup/socket-path.ts";
import { reportRefusals } from "./refusal.ts";

export interface McpHttpStartup {
  readonly service: StoreServiceConfig;
  readonly policy: McpHttpPolicy;
  /** Where the store listens: the MCP server's every call goes there. */
  readonly socketPath: string;
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
  if (service.idp === null) {
    throw invalid("idp: mcp-http requires idp (each request's bearer is a pass the store checks)");
  }
  return { service, policy, socketPath: await storeSocket(service) };
}

/** The store's socket as `serve` places it: configured, or `<runtime dir>/<name>.sock`. */
async function storeSocket(service: StoreServiceConfig): Promise<string> {
  if (service.socket !== null) return service.socket;
  const dataDir = await realpath(service.data_dir).catch(() => service.data_dir);
  const runtime = await resolveRuntimeDir(process.env);
  return socketPathFor(null, service.name ?? basename(dataDir), runtime);
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
        const { service, policy, socketPath } = await loadMcpHttp(positionals[0]!);
        const log = (deps.logger ?? (() => createLogger({ name: "skein-store-mcp" })))();
        // Listen for the stop signal before the listener exists: a signal that arrives as
        // soon as the socket appears must still stop the service cleanly.
        const stop = deps.until ? stopWhen(deps.until) : stopSignal();
        let http: LoopbackHttp;
        try {
          // Loaded here: other `skein-store` commands start without the MCP server's modules.
          const { startMcpHttp } = await import("../mcp/server.ts");
          http = await startMcpHttp({
            policy,
            socketPath,
            storeMaxClients: Number(service.max_clients),
            log,
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
