/**
 * `skein worker KIND DOC [options]`: runs one builtin worker. The verb is parsed strictly
 * (the spec's shape: kind word, document path, then option pairs); option values go through
 * the decoding core so a bad value reads like any other refusal and is a usage error (exit
 * 2). The document is then loaded and validated (exit 1 with the field's path when refused),
 * and the worker serves until SIGTERM/SIGINT (exit 0), a refusal by the server (exit 1), or
 * it gives up reconnecting after `--reconnect-max-attempts` failures (exit 1).
 */

import { readFileSync } from "node:fs";
import { type Command, type Io, parseOptions, UsageError } from "../../common/cli.ts";
import {
  type Decoder,
  decode,
  envValue,
  finiteNumber,
  oneOf,
  string,
  u32,
} from "../../common/decode/index.ts";
import { SkeinError } from "../../common/errors.ts";
import { createLogger } from "../../common/log.ts";
import { AgentLink } from "../../worker/agent-link.ts";
import { loadWorkerDocument, WORKER_KINDS, type WorkerKind } from "../../worker/document.ts";
import { supervisorPid, watchParent } from "../../worker/parent-watch.ts";
import { WorkerGaveUp, WorkerRefused, WorkerRuntime } from "../../worker/runtime.ts";
import { MAX_CONCURRENCY } from "../rpc/frames.ts";
import { grpcTarget } from "../rpc/protocol.ts";

export const WORKER_DEFAULTS = {
  endpoint: "127.0.0.1:7381", // the server's default grpc.listen
  namespace: "default",
  concurrency: 16,
  reconnectInitialBackoffS: 0.5,
  reconnectMaxBackoffS: 30,
  reconnectMaxAttempts: 0,
} as const;

const EXIT_GRACE_MS = 2_000;

export interface WorkerArgs {
  readonly kind: WorkerKind;
  readonly document: string;
  readonly target: string;
  readonly namespace: string;
  readonly concurrency: number;
  readonly reconnectInitialMs: number;
  readonly reconnectMaxMs: number;
  readonly reconnectMaxAttempts: number;
  readonly tokenFile: string | undefined;
}

const OPTIONS = {
  endpoint: { type: "string" },
  namespace: { type: "string" },
  concurrency: { type: "string" },
  "reconnect-initial-backoff": { type: "string" },
  "reconnect-max-backoff": { type: "string" },
  "reconnect-max-attempts": { type: "string" },
  "token-file": { type: "string" },
} as const;

function option<T>(name: string, decoder: Decoder<T>, text: string | undefined, fallback: T): T {
  if (text === undefined) return fallback;
  const r = decode(decoder, envValue(text));
  if (!r.ok) throw new UsageError(`--${name}: ${r.error.reason}`);
  return r.value;
}

/** Parses the verb after `worker`; throws UsageError. */
export function parseWorkerArgs(args: readonly string[]): WorkerArgs {
  const { values, positionals } = parseOptions(args, OPTIONS, { min: 2, max: 2 });
  const kind = option("kind", oneOf(WORKER_KINDS), positionals[0], "exec");
  const endpoint = values.endpoint ?? WORKER_DEFAULTS.endpoint;
  const target = grpcTarget(endpoint);
  if (target === undefined) {
    throw new UsageError(
      `--endpoint: must be host:port or http://host:port, found ${JSON.stringify(endpoint)}`,
    );
  }
  const namespace = option(
    "namespace",
    string({ minBytes: 1, maxBytes: 256, trim: true }),
    values.namespace,
    WORKER_DEFAULTS.namespace,
  );
  const concurrency = option(
    "concurrency",
    u32({ min: 1, max: MAX_CONCURRENCY }),
    values.concurrency,
    WORKER_DEFAULTS.concurrency,
  );
  const seconds = finiteNumber({ min: 0.001, max: 86_400 });
  const initial = option(
    "reconnect-initial-backoff",
    seconds,
    values["reconnect-initial-backoff"],
    WORKER_DEFAULTS.reconnectInitialBackoffS,
  );
  const max = option(
    "reconnect-max-backoff",
    seconds,
    values["reconnect-max-backoff"],
    Math.max(initial, WORKER_DEFAULTS.reconnectMaxBackoffS),
  );
  if (max < initial) {
    throw new UsageError(
      `--reconnect-max-backoff: must be at least --reconnect-initial-backoff (${initial}), found ${max}`,
    );
  }
  const attempts = option(
    "reconnect-max-attempts",
    u32({ max: 1_000_000 }),
    values["reconnect-max-attempts"],
    WORKER_DEFAULTS.reconnectMaxAttempts,
  );
  return {
    kind,
    document: positionals[1]!,
    target,
    namespace,
    concurrency,
    reconnectInitialMs: Math.round(initial * 1000),
    reconnectMaxMs: Math.round(max * 1000),
    reconnectMaxAttempts: attempts,
    tokenFile: values["token-file"],
  };
}

function readToken(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new SkeinError(
      "token_file_unreadable",
      `--token-file: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const token = text.trim();
  if (token === "" || /\s/.test(token)) {
    throw new SkeinError("token_file_invalid", `--token-file: ${path} must hold one token`);
  }
  return token;
}

async function runWorker(args: readonly string[], io: Io): Promise<number> {
  const parsed = parseWorkerArgs(args);
  const logger = createLogger({ name: "skein-worker" });
  let runtime: WorkerRuntime;
  let link: AgentLink | undefined;
  try {
    const token = parsed.tokenFile === undefined ? undefined : readToken(parsed.tokenFile);
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
    "  --token-file PATH                 file holding the bearer token (worker grant)",
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
