/**
 * The store's handle on one query worker process. States:
 *
 *   starting ──ready──▶ idle ⇄ busy (one query)
 *       │                 │      │
 *       └──(exit, bad frame, kill)──▶ dead   (never reused; the pool starts another)
 *
 * The worker answers the store's messages strictly in order, so answers are matched to a
 * FIFO of waiters. Anything off-protocol (a malformed or oversized frame, an answer
 * nobody waits for) kills the process. The child gets a minimal environment: PATH and the
 * store's own Node binary (SKEIN_QUERY_NODE), nothing of the store's secrets.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { decodeOrThrow } from "../../common/decode/index.ts";
import type { SkeinError } from "../../common/errors.ts";
import { storeError } from "../errors.ts";
import { encodeJsonFrame, JsonFrameReader } from "./frames.ts";
import { QUERY_WORKER_START_MS } from "./limits.ts";
import { QUERY_PROTOCOL, type WorkerInput, type WorkerOutput, workerOutput } from "./protocol.ts";

interface Waiter {
  resolve(message: WorkerOutput): void;
  reject(error: SkeinError): void;
}

export class QueryWorkerProcess {
  readonly #child: ChildProcess;
  readonly #waiters: Waiter[] = [];
  #dead: SkeinError | undefined;
  #nextId = 1;

  private constructor(child: ChildProcess, frameLimit: number) {
    this.#child = child;
    const reader = new JsonFrameReader(frameLimit);
    child.stdout!.on("data", (chunk: Buffer) => {
      for (const event of reader.push(chunk)) {
        if (event.kind === "too_large") {
          this.kill(`sent a frame of ${event.length} bytes (at most ${frameLimit})`);
          return;
        }
        this.#onFrame(event.payload);
      }
    });
    child.stdin!.on("error", () => {});
    child.on("error", (error) => this.#die(error.message));
    child.on("exit", (code, signal) =>
      this.#die(signal === null ? `exited with status ${code}` : `was killed by ${signal}`),
    );
  }

  /** Starts `path` and resolves once it has said `ready` with our protocol version. */
  static async start(path: string, frameLimit: number): Promise<QueryWorkerProcess> {
    const child = spawn(path, [], {
      stdio: ["pipe", "pipe", "inherit"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", SKEIN_QUERY_NODE: process.execPath },
    });
    const worker = new QueryWorkerProcess(child, frameLimit);
    const timer = setTimeout(
      () => worker.kill(`did not say ready within ${QUERY_WORKER_START_MS} ms`),
      QUERY_WORKER_START_MS,
    );
    try {
      const ready = await worker.#next();
      if (ready.type !== "ready") throw worker.kill(`sent ${ready.type} before ready`);
      if (ready.protocol !== QUERY_PROTOCOL) {
        throw worker.kill(`speaks protocol ${ready.protocol}, not ${QUERY_PROTOCOL}`);
      }
      return worker;
    } finally {
      clearTimeout(timer);
    }
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get dead(): boolean {
    return this.#dead !== undefined;
  }

  /** A fresh message id. */
  id(): number {
    const id = this.#nextId;
    this.#nextId = id >= 0xffff_fff0 ? 1 : id + 1;
    return id;
  }

  /** Sends one framed message and resolves with the worker's answer to it. */
  post(frame: Buffer): Promise<WorkerOutput> {
    if (this.#dead !== undefined) return Promise.reject(this.#dead);
    const answer = this.#next();
    this.#child.stdin!.write(frame);
    return answer;
  }

  send(message: WorkerInput): Promise<WorkerOutput> {
    return this.post(encodeJsonFrame(JSON.stringify(message)));
  }

  /** Kills the process; the returned error (also what every waiter gets) names why. */
  kill(reason: string): SkeinError {
    this.#die(reason);
    this.#child.kill("SIGKILL");
    return this.#dead!;
  }

  #next(): Promise<WorkerOutput> {
    if (this.#dead !== undefined) return Promise.reject(this.#dead);
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  #onFrame(payload: Buffer): void {
    let message: WorkerOutput;
    try {
      message = decodeOrThrow(workerOutput, JSON.parse(payload.toString("utf8")));
    } catch (error) {
      this.kill(`sent a malformed message (${(error as Error).message.slice(0, 200)})`);
      return;
    }
    const waiter = this.#waiters.shift();
    if (waiter === undefined) this.kill(`sent ${message.type} unasked`);
    else waiter.resolve(message);
  }

  #die(reason: string): void {
    if (this.#dead !== undefined) return;
    this.#dead = storeError("query_worker_failed", `the query worker ${reason}`);
    for (const waiter of this.#waiters.splice(0)) waiter.reject(this.#dead);
    this.#child.stdin?.destroy();
  }
}
