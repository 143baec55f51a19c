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

import { spawn } from "node:child_process";
import type { SkeinError } from "../../common/errors.ts";
import { storeError } from "../errors.ts";
import { WorkerPipe } from "../worker-pipe.ts";
import { encodeJsonFrame } from "./frames.ts";
import { QUERY_WORKER_START_MS } from "./limits.ts";
import { QUERY_PROTOCOL, type WorkerInput, type WorkerOutput, workerOutput } from "./protocol.ts";

export class QueryWorkerProcess {
  readonly #pipe: WorkerPipe<WorkerOutput>;
  #nextId = 1;

  private constructor(pipe: WorkerPipe<WorkerOutput>) {
    this.#pipe = pipe;
  }

  /** Starts `path` and resolves once it has said `ready` with our protocol version. */
  static async start(path: string, frameLimit: number): Promise<QueryWorkerProcess> {
    const child = spawn(path, [], {
      stdio: ["pipe", "pipe", "inherit"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", SKEIN_QUERY_NODE: process.execPath },
    });
    const worker = new QueryWorkerProcess(
      new WorkerPipe(child, {
        frameLimit,
        decoder: workerOutput,
        failure: (reason) => storeError("query_worker_failed", `the query worker ${reason}`),
      }),
    );
    const timer = setTimeout(
      () => worker.kill(`did not say ready within ${QUERY_WORKER_START_MS} ms`),
      QUERY_WORKER_START_MS,
    );
    try {
      const ready = await worker.#pipe.next();
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
    return this.#pipe.pid;
  }

  get dead(): boolean {
    return this.#pipe.dead;
  }

  /** A fresh message id. */
  id(): number {
    const id = this.#nextId;
    this.#nextId = id >= 0xffff_fff0 ? 1 : id + 1;
    return id;
  }

  /** Sends one framed message and resolves with the worker's answer to it. */
  post(frame: Buffer): Promise<WorkerOutput> {
    return this.#pipe.post(frame);
  }

  send(message: WorkerInput): Promise<WorkerOutput> {
    return this.post(encodeJsonFrame(JSON.stringify(message)));
  }

  /** Kills the process; the returned error (also what every waiter gets) names why. */
  kill(reason: string): SkeinError {
    return this.#pipe.kill(reason);
  }
}
