/**
 * One supervised embedding worker (the document worker, or the question worker) and the
 * callers waiting for it. The worker embeds one batch at a time; at most `embed_waiting`
 * callers wait behind the running one, and one more is refused with `embed_busy`.
 *
 * A worker that dies after start-up is restarted: the first restart at once, then after
 * `embed_restart_ms`, doubling up to `embed_restart_most_ms`; a batch answered resets the
 * sequence. Each restart is logged with its number and delay. Callers waiting meanwhile
 * keep their places (bounded by admission and by their own call deadline); a restart that
 * fails its start-up checks answers them with its code and the next restart follows the
 * same backoff.
 */

import { backoffDelay } from "../../common/backoff.ts";
import type { SkeinError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import type { EmbedSettings } from "../config/types.ts";
import { storeError } from "../errors.ts";
import type { VectorsItem } from "./protocol.ts";
import { EmbedWorkerProcess, type ReadyInfo } from "./worker-process.ts";

interface Call {
  readonly kind: "document" | "question";
  readonly texts: readonly string[];
  readonly timeoutMs: number;
  resolve(items: VectorsItem[]): void;
  reject(error: SkeinError): void;
}

export class EmbedSupervisor {
  readonly #settings: EmbedSettings;
  readonly #log: Logger;
  readonly #role: string;
  readonly #waiting: Call[] = [];
  #worker: EmbedWorkerProcess | undefined;
  #running = false;
  #deaths = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  #closed = false;
  /** The last start failure, while no worker runs. */
  #failure: SkeinError | undefined;

  constructor(settings: EmbedSettings, log: Logger, role: string) {
    this.#settings = settings;
    this.#log = log;
    this.#role = role;
  }

  /** Starts the first worker; a failure is returned (and kept), never thrown. */
  async start(): Promise<SkeinError | undefined> {
    try {
      this.#adopt(await EmbedWorkerProcess.start(this.#settings));
      return undefined;
    } catch (error) {
      this.#failure = error as SkeinError;
      return this.#failure;
    }
  }

  get ready(): ReadyInfo | undefined {
    return this.#worker?.ready;
  }

  get pid(): number | undefined {
    return this.#worker?.pid;
  }

  /** Embeds a request's texts (in batches) once the worker is free; admission as above. */
  embed(kind: "document" | "question", texts: readonly string[], timeoutMs: number) {
    if (this.#closed)
      return Promise.reject(storeError("embed_worker_failed", "the store is stopping"));
    const busy = this.#running || this.#worker === undefined;
    if (busy && this.#waiting.length >= Number(this.#settings.embed_waiting)) {
      return Promise.reject(
        storeError(
          "embed_busy",
          `embed_waiting (${this.#settings.embed_waiting}) callers already wait for the ${this.#role} worker`,
        ),
      );
    }
    return new Promise<VectorsItem[]>((resolve, reject) => {
      this.#waiting.push({ kind, texts, timeoutMs, resolve, reject });
      this.#pump();
    });
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#restartTimer);
    this.#worker?.kill("was stopped with the store");
    const stopping = storeError("embed_worker_failed", "the store is stopping");
    for (const call of this.#waiting.splice(0)) call.reject(stopping);
  }

  #adopt(worker: EmbedWorkerProcess): void {
    this.#worker = worker;
    this.#failure = undefined;
    worker.onDeath((reason) => this.#onDeath(reason));
    this.#pump();
  }

  #pump(): void {
    const worker = this.#worker;
    if (this.#running || worker === undefined || worker.dead) return;
    const call = this.#waiting.shift();
    if (call === undefined) return;
    this.#running = true;
    this.#runCall(worker, call)
      .then(
        (items) => {
          this.#deaths = 0;
          call.resolve(items);
        },
        (error: SkeinError) => call.reject(error),
      )
      .finally(() => {
        this.#running = false;
        this.#pump();
      });
  }

  /**
   * A request's texts in batches of embed_batch_items, each bounded by the call deadline.
   * The next batch is written while the worker embeds one (answers come in order), so the
   * worker never waits for the store to read an answer and write the next batch; its
   * deadline starts when the batch before it is answered, the moment the worker takes it.
   */
  async #runCall(worker: EmbedWorkerProcess, call: Call): Promise<VectorsItem[]> {
    const size = Number(this.#settings.embed_batch_items);
    const batches: Promise<VectorsItem[]>[] = [];
    let previous: Promise<unknown> = Promise.resolve();
    for (let at = 0; at < call.texts.length; at += size) {
      const batch = worker.embed(
        call.kind,
        call.texts.slice(at, at + size),
        call.timeoutMs,
        previous,
      );
      // A failed batch fails the call (awaited below); the ones after it fail with it.
      batch.catch(() => {});
      batches.push(batch);
      previous = batch;
      if (batches.length >= 2) await batches[batches.length - 2];
    }
    return (await Promise.all(batches)).flat();
  }

  #onDeath(reason: SkeinError): void {
    this.#worker = undefined;
    if (this.#closed) return;
    this.#deaths += 1;
    const delay =
      this.#deaths === 1
        ? 0
        : backoffDelay(
            {
              initialMs: Number(this.#settings.embed_restart_ms),
              maxMs: Number(this.#settings.embed_restart_most_ms),
            },
            this.#deaths - 1,
          );
    this.#log.warn(
      { worker: this.#role, restart: this.#deaths, delay_ms: delay, reason: reason.message },
      "embedding worker died; restarting",
    );
    this.#restartTimer = setTimeout(() => void this.#restart(), delay);
  }

  async #restart(): Promise<void> {
    if (this.#closed) return;
    try {
      const worker = await EmbedWorkerProcess.start(this.#settings);
      if (this.#closed) {
        worker.kill("was stopped with the store");
        return;
      }
      this.#log.info({ worker: this.#role, pid: worker.pid }, "embedding worker restarted");
      this.#adopt(worker);
    } catch (error) {
      this.#failure = error as SkeinError;
      for (const call of this.#waiting.splice(0)) call.reject(this.#failure);
      this.#onDeath(this.#failure);
    }
  }

  /** The failure callers get while no worker runs and none is starting. */
  get failure(): SkeinError | undefined {
    return this.#worker === undefined ? this.#failure : undefined;
  }
}
