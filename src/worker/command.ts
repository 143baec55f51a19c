/**
 * `skein worker KIND DOC [options]`: runs one builtin worker. The verb is parsed by the
 * grammar in verb.ts (a bad option is a usage error, exit 2). The document is then loaded
 * and validated (exit 1 with the field's path when refused), and the worker serves until SIGTERM/SIGINT (exit 0), a refusal by the server (exit 1), or
 * it gives up reconnecting after `--reconnect-max-attempts` failures (exit 1).
 */

import type { Command, Io } from "../common/cli.ts";
import { SkeinError } from "../common/errors.ts";
import { FileRefused, readBoundedFile } from "../common/files.ts";
import { createLogger } from "../common/log.ts";
import { MAX_CONCURRENCY } from "../protocol/worker-stream/decode.ts";
import { AgentLink } from "./agent-link.ts";
import { loadWorkerDocument } from "./document.ts";
import { workerRefusal } from "./failures.ts";
import { supervisorPid, watchParent } from "./parent-watch.ts";
import { WorkerGaveUp, WorkerRefused, WorkerRuntime } from "./runtime.ts";
import { MAX_TOKEN_FILE_BYTES, parseWorkerArgs, WORKER_DEFAULTS } from "./verb.ts";

const EXIT_GRACE_MS = 2_000;

async function readToken(path: string): Promise<string> {
  let text: string;
  try {
    text = (await readBoundedFile(path, { maxBytes: MAX_TOKEN_FILE_BYTES })).toString("utf8");
  } catch (error) {
    if (!(error instanceof FileRefused)) throw error;
    throw workerRefusal("token_file_unreadable", `--token-file: ${error.message}`);
  }
  const token = text.trim();
  if (token === "" || /\s/.test(token)) {
    throw workerRefusal("token_file_invalid", `--token-file: ${path} must hold one token`);
  }
  return token;
}

/** SKEIN_TOKEN, trimmed; undefined when unset or empty. */
function tokenFromEnv(): string | undefined {
  const token = process.env.SKEIN_TOKEN?.trim();
  if (token === undefined || token === "") return undefined;
  if (/\s/.test(token)) {
    throw new SkeinError("token_invalid", "SKEIN_TOKEN must hold one token");
  }
  return token;
}

async function runWorker(args: readonly string[], io: Io): Promise<number> {
  const parsed = parseWorkerArgs(args);
  const logger = createLogger({ name: "skein-worker" });
  let runtime: WorkerRuntime;
  let link: AgentLink | undefined;
  try {
    // --token-file, else SKEIN_TOKEN (as every skein client reads it).
    const token =
      parsed.tokenFile === undefined ? tokenFromEnv() : await readToken(parsed.tokenFile);
    // Agent workers also hold the agent transport, where each gRPC welcome says it is.
    link = parsed.kind === "agent" ? new AgentLink(token, logger) : undefined;
    const document = await loadWorkerDocument(parsed.kind, parsed.document, {
      ...(link === undefined ? {} : { agentLink: link }),
    });
    runtime = new WorkerRuntime({
      document,
      target: parsed.target,
      namespace: parsed.namespace,
      concurrency: parsed.concurrency,
      token,
      reconnect: {
        initialMs: parsed.reconnectInitialMs,
        maxMs: parsed.reconnectMaxMs,
        maxAttempts: parsed.reconnectMaxAttempts,
      },
      deployment: process.env.SKEIN_DEPLOYMENT ?? "",
      logger,
      ...(link === undefined ? {} : { onWelcome: transportAt(link, parsed.target) }),
    });
  } catch (error) {
    link?.close();
    if (error instanceof SkeinError) {
      io.err(`skein worker: ${parsed.document}: ${error.message}`);
      return 1;
    }
    throw error;
  }
  const stop = () => runtime.stop();
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  const supervised = (process.env.SKEIN_DEPLOYMENT ?? "") !== "";
  const parent = supervised
    ? watchParent(
        () => {
          logger.warn({ deployment: process.env.SKEIN_DEPLOYMENT }, "supervisor gone; stopping");
          stop();
        },
        { supervisor: supervisorPid() },
      )
    : undefined;
  try {
    await runtime.run();
    return 0;
  } catch (error) {
    if (error instanceof WorkerGaveUp || error instanceof WorkerRefused) {
      io.err(
        `skein worker: ${error instanceof WorkerRefused ? "refused by the server: " : ""}${error.message}`,
      );
      return 1;
    }
    throw error;
  } finally {
    parent?.stop();
    link?.close();
    process.off("SIGTERM", stop);
    process.off("SIGINT", stop);
    // A handler that ignored its abort signal (a user module's stray timer) must not keep a
    // stopped worker alive: it gets a short grace, then the process ends.
    setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
  }
}

export const workerCommand: Command = {
  name: "worker",
  summary: "run a builtin worker (exec, module, http or agent) from a worker document",
  verbs: ["exec", "module", "http", "agent"],
  help: [
    "KIND DOC [options]",
    "",
    "KIND is exec, module, http or agent; DOC is the worker document (YAML or JSON).",
    "",
    "Options:",
    `  --endpoint ADDR                   gRPC endpoint, host:port or http://host:port (default ${WORKER_DEFAULTS.endpoint})`,
    `  --namespace N                     namespace to serve (default ${WORKER_DEFAULTS.namespace})`,
    `  --concurrency N                   handlers running at once, 1..${MAX_CONCURRENCY} (default ${WORKER_DEFAULTS.concurrency})`,
    `  --reconnect-initial-backoff SECS  first wait before reconnecting (default ${WORKER_DEFAULTS.reconnectInitialBackoffS})`,
    `  --reconnect-max-backoff SECS      longest wait between reconnects (default ${WORKER_DEFAULTS.reconnectMaxBackoffS})`,
    "  --reconnect-max-attempts N        failed reconnects in a row before giving up; 0 never (default 0)",
    "  --token-file PATH                 file holding the bearer token (worker grant;",
    "                                    default: the SKEIN_TOKEN environment variable)",
    "",
    "An agent worker also connects to the server's agent transport (for interventions) on",
    "the --endpoint host, at the port the server announces when the worker connects.",
  ].join("\n"),
  run: runWorker,
};

/** Follows the agent transport the server announces: same host as the gRPC endpoint. */
function transportAt(
  link: AgentLink,
  target: string,
): (agentPort: number, sessionId: string) => Promise<void> {
  const host = target.slice(0, target.lastIndexOf(":"));
  return async (agentPort, sessionId) => {
    if (agentPort > 0) await link.connect(host, agentPort, sessionId);
    else link.disconnect();
  };
}
