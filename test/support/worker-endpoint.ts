// Test helpers for the worker stream: a real gRPC endpoint (the matcher) with a recording
// event sink, real `skein worker` child processes, and worker documents in temp folders.

import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AttemptRef } from "../../src/protocol/worker-stream/index.ts";
import type {
  ActivityFailure,
  MatcherEvents,
  TaskOffer,
} from "../../src/workflow/engine/dispatcher.ts";
import type { Principal } from "../../src/workflow/rpc/auth.ts";
import {
  startWorkerEndpoint,
  type WorkerEndpoint,
  type WorkerEndpointOptions,
} from "../../src/workflow/rpc/server.ts";
import { until } from "./until.ts";

export const SKEIN_BIN = fileURLToPath(new URL("../../bin/skein.ts", import.meta.url));
export const ACTIVITIES = fileURLToPath(
  new URL("../fixtures/workers/activities.ts", import.meta.url),
);

/** Bearer tokens the test verifier knows. */
export const TOKENS: Record<string, Principal> = {
  "worker-all": { subject: "w-all", worker: true, namespaces: "*" },
  "worker-a": { subject: "w-a", worker: true, namespaces: new Set(["a"]) },
  "no-worker-grant": { subject: "reader", worker: false, namespaces: "*" },
};

export type Result =
  | { type: "completed"; ref: AttemptRef; output: string }
  | { type: "failed"; ref: AttemptRef; failure: ActivityFailure };

export class Recorder {
  readonly results: Result[] = [];
  readonly heartbeats: AttemptRef[] = [];
  readonly detached: AttemptRef[] = [];
  readonly attached: AttemptRef[] = [];
  #waiters: { check: () => boolean; done: () => void }[] = [];

  readonly events: MatcherEvents = {
    completed: (ref, output, _ctx, receipt) => {
      this.#push({ type: "completed", ref, output });
      receipt.recorded();
    },
    failed: (ref, failure, _ctx, receipt) => {
      this.#push({ type: "failed", ref, failure });
      receipt.recorded();
    },
    heartbeat: (ref) => {
      this.heartbeats.push(ref);
      this.#poke();
    },
    detached: (refs) => {
      this.detached.push(...refs);
      this.#poke();
    },
    attached: (refs) => {
      this.attached.push(...refs);
      this.#poke();
    },
  };

  #push(result: Result): void {
    this.results.push(result);
    this.#poke();
  }

  #poke(): void {
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.check()) return true;
      w.done();
      return false;
    });
  }

  /** Resolves when `check` holds; rejects after `ms` with `what`. */
  until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`timed out waiting for ${what}`)), ms);
      this.#waiters.push({
        check,
        done: () => {
          clearTimeout(timer);
          done();
        },
      });
    });
  }

  resultFor(ref: AttemptRef): Result | undefined {
    return this.results.find(
      (r) =>
        r.ref.run_id === ref.run_id &&
        r.ref.activity_id === ref.activity_id &&
        r.ref.attempt === ref.attempt,
    );
  }

  waitResult(ref: AttemptRef, ms?: number): Promise<Result> {
    return this.until(
      () => this.resultFor(ref) !== undefined,
      `result of ${ref.run_id}/${ref.activity_id}`,
      ms,
    ).then(() => this.resultFor(ref)!);
  }
}

export async function startEndpoint(
  options: {
    port?: number;
    gate?: (ns: string) => Promise<boolean>;
    recorder?: Recorder;
    maxBacklog?: number;
    /** The agent transport port the welcome announces. */
    agentPort?: number;
    /** Bounds to set (connections, idle timeout, detached TTL, hello timeout). */
    bounds?: Pick<
      WorkerEndpointOptions,
      "maxConnections" | "idleConnectionMs" | "detachedTtlMs" | "helloTimeoutMs"
    >;
  } = {},
): Promise<{ endpoint: WorkerEndpoint; recorder: Recorder; address: string }> {
  const recorder = options.recorder ?? new Recorder();
  const endpoint = await startWorkerEndpoint(`127.0.0.1:${options.port ?? 0}`, {
    verify: async (token) => {
      const principal = TOKENS[token];
      if (principal === undefined) throw new Error("unknown token");
      return principal;
    },
    namespaceGate: options.gate ?? (async () => true),
    events: recorder.events,
    ...(options.maxBacklog === undefined ? {} : { maxBacklogPerQueue: options.maxBacklog }),
    ...(options.agentPort === undefined ? {} : { agentPort: () => options.agentPort! }),
    ...options.bounds,
  });
  return { endpoint, recorder, address: `127.0.0.1:${endpoint.port}` };
}

/** A port nobody listens on (bound, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** Directories made by `tempDir`, removed when the test process exits. */
const made: string[] = [];
process.once("exit", () => {
  for (const dir of made) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // A child process still writing there: the OS temp cleaner takes the rest.
    }
  }
});

/** A fresh directory under the OS temp dir, removed when this test process exits. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "skein-worker-test-"));
  made.push(dir);
  return dir;
}

export async function writeJson(dir: string, name: string, value: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(value, null, 2));
  return path;
}

export async function tokenFile(dir: string, token: string): Promise<string> {
  const path = join(dir, `${token}.token`);
  await writeFile(path, `${token}\n`, { mode: 0o600 });
  return path;
}

/** A worker's files: its temp dir, the `worker-all` bearer in a 0600 token file, its document. */
export interface WorkerFiles {
  readonly dir: string;
  readonly token: string;
  readonly doc: string;
}

/** Writes a worker's files: the token, then `document` as `file`, in a new temp dir. */
export async function workerFiles(file: string, document: unknown): Promise<WorkerFiles> {
  const dir = await tempDir();
  const token = await tokenFile(dir, "worker-all");
  return { dir, token, doc: await writeJson(dir, file, document) };
}

/**
 * An agent worker's document on queue `q` whose one action's model is never reached
 * (nothing listens on port 9): for tests of the agent transport, which offer no task.
 */
export const IDLE_AGENTS = {
  name: "agents",
  task_queue: "q",
  actions: { assistant: { agent: { base_url: "http://127.0.0.1:9", model: "none" } } },
};

export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  stderr(): string;
  kill(signal?: NodeJS.Signals): void;
}

export function spawnWorker(
  args: readonly string[],
  env: Record<string, string> = {},
): WorkerProcess {
  const child = spawn(process.execPath, [SKEIN_BIN, "worker", ...args], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, SKEIN_LOG_LEVEL: "warn", ...env },
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
  return {
    child,
    exited,
    stderr: () => stderr,
    kill: (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}

/**
 * A `skein worker module` in `dir` serving exports of the activities fixture (`actions`) on
 * queue `q` at `endpoint`, its bearer in a 0600 token file, reconnecting fast (50–200 ms)
 * so it follows a server that restarts.
 */
export async function moduleWorker(
  dir: string,
  options: { endpoint: string; token: string; actions: readonly string[]; args?: string[] },
): Promise<WorkerProcess> {
  const token = join(dir, "worker.token");
  await writeFile(token, `${options.token}\n`, { mode: 0o600 });
  const document = await writeJson(dir, "worker.json", {
    name: "w",
    task_queue: "q",
    actions: Object.fromEntries(
      options.actions.map((name) => [name, { module: ACTIVITIES, export: name }]),
    ),
  });
  return spawnWorker([
    "module",
    document,
    "--endpoint",
    options.endpoint,
    "--token-file",
    token,
    "--reconnect-initial-backoff",
    "0.05",
    "--reconnect-max-backoff",
    "0.2",
    ...(options.args ?? []),
  ]);
}

let activity = 1;

/** An offer for `action` on queue `q` in namespace `default`. */
export function offer(action: string, input: unknown, extra: Partial<TaskOffer> = {}): TaskOffer {
  return {
    ref: { run_id: randomUUID(), activity_id: activity++, attempt: 1 },
    namespace: "default",
    taskQueue: "q",
    workflowId: randomUUID(),
    action,
    inputJson: JSON.stringify(input),
    startToCloseMs: 0,
    heartbeatMs: 0,
    ...extra,
  };
}

/** Waits until the matcher has `n` live sessions. */
export async function sessions(endpoint: WorkerEndpoint, n: number, ms = 15_000): Promise<void> {
  await until(`${n} worker sessions`, () => endpoint.matcher.stats().sessions === n, {
    timeoutMs: ms,
  });
}
