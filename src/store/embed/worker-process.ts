/**
 * The store's handle on one embedding worker process. States:
 *
 *   starting ──ready──▶ idle ⇄ busy (one batch)
 *       │                 │      │
 *       └──(failed, exit, bad frame, timeout, kill)──▶ dead   (never reused)
 *
 * Start-up sends `start` with the store's limits and waits `embed_ready_ms` for `ready`
 * (else `embed_worker_start_timeout`); a `failed` answer keeps the worker's code
 * (`embed_limits`, `embed_model_missing`, `embed_model_mismatch`), and a Ready naming
 * another identity than `embed_model_sha256` is `embed_model_mismatch`. The worker answers
 * in order, so answers match a FIFO of waiters; anything off-protocol kills the process.
 * The child gets a minimal environment: PATH, the store's Node binary and the model
 * directory, nothing of the store's secrets.
 */

import { type ChildProcess, spawn } from "node:child_process";
import type { SkeinError } from "../../common/errors.ts";
import type { EmbedSettings } from "../config/types.ts";
import { type StoreRefusalCode, storeError } from "../errors.ts";
import { WorkerPipe } from "../worker-pipe.ts";
import { encodeJsonFrame } from "./frames.ts";
import {
  EMBED_PROTOCOL,
  largestRequestBytes,
  START_FAILURE_CODES,
  type StartMessage,
  type VectorsItem,
  type WorkerInput,
  type WorkerOutput,
  workerOutput,
} from "./protocol.ts";

export interface ReadyInfo {
  readonly identity: string;
  readonly dims: number;
  readonly contentTokens: number;
}

export class EmbedWorkerProcess {
  readonly #pipe: WorkerPipe<WorkerOutput>;
  #nextId = 1;
  #onDeath: ((reason: SkeinError) => void) | undefined;
  ready: ReadyInfo | undefined;

  private constructor(child: ChildProcess, frameLimit: number) {
    this.#pipe = new WorkerPipe(child, {
      frameLimit,
      decoder: workerOutput,
      failure: (reason) => storeError("embed_worker_failed", `the embedding worker ${reason}`),
      // A death during start-up is the start's own failure, not the supervisor's news.
      onDeath: (error) => {
        if (this.ready !== undefined) this.#onDeath?.(error);
      },
    });
  }

  /** Starts the worker and resolves once it is ready with the expected model. */
  static async start(settings: EmbedSettings): Promise<EmbedWorkerProcess> {
    const child = spawn(settings.embed_worker, [], {
      stdio: ["pipe", "pipe", "inherit"],
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        SKEIN_EMBED_NODE: process.execPath,
        SKEIN_EMBED_MODEL_DIR: settings.embed_model_dir,
      },
    });
    const worker = new EmbedWorkerProcess(child, Number(settings.embed_frame_bytes));
    const readyMs = Number(settings.embed_ready_ms);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      worker.kill(`did not say ready within ${readyMs} ms`);
    }, readyMs);
    try {
      const answer = await worker.#ask(startMessage(settings)).catch((error: SkeinError) => {
        if (!timedOut) throw error;
        throw storeError(
          "embed_worker_start_timeout",
          `embed_worker did not say ready within embed_ready_ms (${readyMs} ms)`,
        );
      });
      worker.ready = checkReady(worker, answer, settings.embed_model_sha256);
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

  /** Called once when the process dies after start-up. */
  onDeath(listener: (reason: SkeinError) => void): void {
    this.#onDeath = listener;
  }

  /**
   * Embeds one batch; the worker is killed when it does not answer within `timeoutMs` of
   * `startsAfter` settling (the answer to the batch written before it, if that one is still
   * being embedded: the worker takes batches in order).
   */
  async embed(
    kind: "document" | "question",
    texts: readonly string[],
    timeoutMs: number,
    startsAfter: Promise<unknown> = Promise.resolve(),
  ): Promise<VectorsItem[]> {
    const id = this.#nextId;
    this.#nextId = id >= 0xffff_fff0 ? 1 : id + 1;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      if (settled) return;
      timer = setTimeout(
        () => this.kill(`did not answer a batch within embed_call_ms (${timeoutMs} ms)`),
        timeoutMs,
      );
    };
    startsAfter.then(arm, arm);
    try {
      const answer = await this.#ask({ type: "embed", id, kind, texts: [...texts] });
      if (answer.type === "vectors" && answer.id === id && answer.items.length === texts.length) {
        return answer.items;
      }
      if (answer.type === "error") {
        throw storeError("embed_worker_failed", `the embedding worker: ${answer.message}`);
      }
      throw this.kill(`answered ${answer.type} where vectors for ${texts.length} texts were due`);
    } finally {
      settled = true;
      clearTimeout(timer);
    }
  }

  /** Kills the process; the returned error (also what every waiter gets) names why. */
  kill(reason: string): SkeinError {
    return this.#pipe.kill(reason);
  }

  #ask(message: WorkerInput): Promise<WorkerOutput> {
    return this.#pipe.post(encodeJsonFrame(message));
  }
}

/** The start message for `settings` (also the bench's in-process reference's limits). */
export function startMessage(settings: EmbedSettings): StartMessage {
  const windows = settings.embed_windows
    ? {
        max: Number(settings.embed_max_windows),
        overlap: Number(settings.embed_window_overlap_tokens),
      }
    : null;
  const batch = settings.embed_batch_items;
  return {
    type: "start",
    threads: Number(settings.embed_threads),
    memory_bytes: Number(settings.embed_memory_bytes),
    tokens: Number(settings.embed_tokens),
    frame_bytes: Number(settings.embed_frame_bytes),
    batch_items: Number(batch),
    request_bytes: Math.min(
      0xffff_ffff,
      largestRequestBytes(Number(batch), Number(settings.embed_input_bytes)),
    ),
    windows,
  };
}

function checkReady(worker: EmbedWorkerProcess, answer: WorkerOutput, expected: string): ReadyInfo {
  if (answer.type === "failed") {
    worker.kill("failed its start-up checks");
    const code = START_FAILURE_CODES.includes(answer.code) ? answer.code : "embed_worker_failed";
    throw storeError(code as StoreRefusalCode, `embed_worker: ${answer.message}`);
  }
  if (answer.type !== "ready") throw worker.kill(`sent ${answer.type} before ready`);
  if (answer.protocol !== EMBED_PROTOCOL) {
    throw worker.kill(`speaks protocol ${answer.protocol}, not ${EMBED_PROTOCOL}`);
  }
  if (answer.identity !== expected) {
    worker.kill("serves another model");
    throw storeError(
      "embed_model_mismatch",
      `embed_worker serves model ${answer.identity}, not embed_model_sha256 ${expected}`,
    );
  }
  return { identity: answer.identity, dims: answer.dims, contentTokens: answer.content_tokens };
}
