/**
 * The store's embedding service: the document worker and, with `embed_question_worker`,
 * a second worker with its own copy of the model for questions, so a long walk never
 * delays a question (both together may hold twice `embed_memory_bytes`). Start-up checks
 * the worker file (`embed_worker_missing|not_file|not_executable`) and then each worker's
 * own start-up; a failure leaves every other verb served and is the answer of every
 * embedding verb. Requests are checked here (`embed_request_too_large`,
 * `embed_input_too_large`) before they wait for a worker.
 */

import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import type { SkeinError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import type { EmbedSettings } from "../config/types.ts";
import type { Store } from "../engine/index.ts";
import { storeError } from "../errors.ts";
import type { Embedder, EmbedKind, TextVectors } from "./embedder.ts";
import { COMPONENT_BYTES, type VectorsItem } from "./protocol.ts";
import { EmbedSupervisor } from "./supervisor.ts";
import { EmbedWalker } from "./walk.ts";
import { WriterGate } from "./writer-gate.ts";

export class EmbedService implements Embedder {
  readonly settings: EmbedSettings;
  readonly #documents: EmbedSupervisor;
  readonly #questions: EmbedSupervisor | undefined;
  readonly #log: Logger;
  #failure: SkeinError | undefined;
  /** Foreground commits to a branch wait here while the walk commits a page of it. */
  readonly gate: WriterGate;
  /** The walk of embedded fields, once started. */
  walker: EmbedWalker | undefined;

  private constructor(settings: EmbedSettings, log: Logger) {
    this.settings = settings;
    this.#log = log;
    this.gate = new WriterGate(Math.min(Number(settings.embed_writer_wait_ms), 2_147_483_647));
    this.#documents = new EmbedSupervisor(settings, log, "document");
    this.#questions = settings.embed_question_worker
      ? new EmbedSupervisor(settings, log, "question")
      : undefined;
  }

  /** Checks the worker file and starts the workers; never throws (see `failure`). */
  static async start(settings: EmbedSettings, log: Logger): Promise<EmbedService> {
    const service = new EmbedService(settings, log);
    service.#failure = await checkWorkerFile(settings.embed_worker);
    if (service.#failure === undefined) {
      const [documents, questions] = await Promise.all([
        service.#documents.start(),
        service.#questions?.start(),
      ]);
      service.#failure = documents ?? questions;
    }
    if (service.#failure !== undefined) void service.close();
    return service;
  }

  /** The start-up failure every embedding verb answers with, if any. */
  get failure(): SkeinError | undefined {
    return this.#failure;
  }

  get identity(): string {
    return this.settings.embed_model_sha256;
  }

  get dims(): number | undefined {
    return this.#documents.ready?.dims;
  }

  /** Worker process ids (for status and tests). */
  get pids(): { document?: number; question?: number } {
    return { document: this.#documents.pid, question: this.#questions?.pid };
  }

  /** Embeds texts; the request's bounds are checked first. */
  async embed(kind: EmbedKind, texts: readonly string[]): Promise<TextVectors[]> {
    if (this.#failure !== undefined) throw this.#failure;
    const s = this.settings;
    if (texts.length > Number(s.embed_request_items)) {
      throw storeError(
        "embed_request_too_large",
        `${texts.length} texts; embed_request_items is ${s.embed_request_items}`,
      );
    }
    texts.forEach((text, i) => {
      const bytes = Buffer.byteLength(text);
      if (bytes > Number(s.embed_input_bytes)) {
        throw storeError(
          "embed_input_too_large",
          `text ${i} is ${bytes} bytes; embed_input_bytes is ${s.embed_input_bytes}`,
        );
      }
    });
    if (texts.length === 0) return [];
    const worker = kind === "question" ? (this.#questions ?? this.#documents) : this.#documents;
    const failure = worker.failure;
    if (failure !== undefined) throw failure;
    const items = await worker.embed(kind, texts, this.#callMs(kind));
    const dims = this.dims ?? 0;
    return items.map((item, i) => {
      if (item.kind !== "vectors") return { ok: false, refusal: this.#refusal(item, i) };
      const bytes = Buffer.from(item.data, "base64");
      if (bytes.length < item.windows * dims * COMPONENT_BYTES) {
        throw storeError(
          "embed_worker_failed",
          `the embedding worker answered text ${i} with ${bytes.length} bytes for ${item.windows} windows of ${dims} dimensions`,
        );
      }
      // Little-endian float32 copied in bulk (every platform Skein runs on is little-endian;
      // a copy, since a decoded Buffer need not be 4-byte aligned).
      const all = new Float32Array(item.windows * dims);
      new Uint8Array(all.buffer).set(bytes.subarray(0, all.byteLength));
      const windows = Array.from({ length: item.windows }, (_, w) =>
        all.subarray(w * dims, (w + 1) * dims),
      );
      return { ok: true, windows };
    });
  }

  /** The refusal of text `i` that the worker would not embed. */
  #refusal(item: Exclude<VectorsItem, { kind: "vectors" }>, i: number): SkeinError {
    if (item.kind === "too_long") {
      return storeError(
        "embed_input_too_large",
        `text ${i} is ${item.tokens} tokens; a question must fit the model's window of ${item.most}`,
      );
    }
    return storeError(
      "windows_over_cap",
      `text ${i} needs ${item.windows} windows; embed_max_windows is ${this.settings.embed_max_windows}`,
    );
  }

  /** embed_call_ms per batch; a document batch with windows allows it per possible window. */
  #callMs(kind: EmbedKind): number {
    const s = this.settings;
    const per = Number(s.embed_call_ms);
    const windows = kind === "document" && s.embed_windows ? Number(s.embed_max_windows) : 1;
    return Math.min(per * windows, 2_147_483_647);
  }

  /** Starts the walk of embedded fields over `store` (not after a failed start). */
  startWalk(store: Store): void {
    if (this.#failure !== undefined || this.walker !== undefined) return;
    this.walker = new EmbedWalker(store, this, this.#log);
    this.walker.start();
  }

  /** Stops the walk (after its page under way) and the workers. */
  async close(): Promise<void> {
    await this.walker?.stop();
    this.#documents.close();
    this.#questions?.close();
  }
}

async function checkWorkerFile(path: string): Promise<SkeinError | undefined> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch {
    return storeError("embed_worker_missing", `embed_worker ${path}: no such file`);
  }
  if (!info.isFile()) {
    return storeError("embed_worker_not_file", `embed_worker ${path}: not a regular file`);
  }
  try {
    await access(path, constants.X_OK);
  } catch {
    return storeError("embed_worker_not_executable", `embed_worker ${path}: not executable`);
  }
  return undefined;
}
