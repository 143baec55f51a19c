/**
 * The store's end of a framed stdin/stdout worker process (the query and the embedding
 * workers): length-prefixed JSON frames, answers in order matched to a FIFO of waiters,
 * and one way to die. Anything off-protocol (an oversized or malformed frame, an answer
 * nobody waits for) kills the process; an exit, a spawn error or a kill fails every waiter
 * with the same error, which the owner names (`query_worker_failed`, `embed_worker_failed`).
 */

import type { ChildProcess } from "node:child_process";
import { type Decoder, decodeOrThrow } from "../common/decode/index.ts";
import type { SkeinError } from "../common/errors.ts";
import { FrameReader } from "../common/frame-reader.ts";

interface Waiter<Out> {
  resolve(message: Out): void;
  reject(error: SkeinError): void;
}

export interface WorkerPipeOptions<Out extends { readonly type: string }> {
  readonly frameLimit: number;
  readonly decoder: Decoder<Out>;
  /** The error every waiter gets once the process is dead, naming why. */
  readonly failure: (reason: string) => SkeinError;
  /** Told once, when the process dies. */
  readonly onDeath?: (error: SkeinError) => void;
}

export class WorkerPipe<Out extends { readonly type: string }> {
  readonly #child: ChildProcess;
  readonly #options: WorkerPipeOptions<Out>;
  readonly #waiters: Waiter<Out>[] = [];
  #dead: SkeinError | undefined;

  constructor(child: ChildProcess, options: WorkerPipeOptions<Out>) {
    this.#child = child;
    this.#options = options;
    const limit = options.frameLimit;
    const reader = new FrameReader(limit);
    child.stdout!.on("data", (chunk: Buffer) => {
      for (const event of reader.push(chunk)) {
        if (event.kind === "too_large") {
          this.kill(`sent a frame of ${event.length} bytes (at most ${limit})`);
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

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get dead(): boolean {
    return this.#dead !== undefined;
  }

  /** The next answer, whatever it answers. */
  next(): Promise<Out> {
    if (this.#dead !== undefined) return Promise.reject(this.#dead);
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  /** Writes one frame and resolves with the answer to it. */
  post(frame: Buffer): Promise<Out> {
    const answer = this.next();
    if (this.#dead === undefined) this.#child.stdin!.write(frame);
    return answer;
  }

  /** Kills the process; the returned error (also what every waiter gets) names why. */
  kill(reason: string): SkeinError {
    this.#die(reason);
    this.#child.kill("SIGKILL");
    return this.#dead!;
  }

  #onFrame(payload: Buffer): void {
    let message: Out;
    try {
      message = decodeOrThrow(this.#options.decoder, JSON.parse(payload.toString("utf8")));
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
    this.#dead = this.#options.failure(reason);
    for (const waiter of this.#waiters.splice(0)) waiter.reject(this.#dead);
    this.#child.stdin?.destroy();
    this.#options.onDeath?.(this.#dead);
  }
}
