/**
 * The event loop's side of the index thread (index-thread.ts): one method per message,
 * each resolving with the thread's answer. Messages are served in the order they are
 * sent, so a search sent after a diff sees the diff. A thread that dies fails the calls
 * waiting on it (`internal_error`) and is replaced by a fresh one with nothing in it: the
 * owner (vector-index.ts) is told to forget what it had handed over, and its heads
 * reload from their checkpoints.
 */

import { Worker } from "node:worker_threads";
import { storeError } from "../errors.ts";
import type { VectorHit } from "./exact.ts";
import type { Checkpoint } from "./hnsw.ts";
import {
  type IndexAnswer,
  type IndexRequest,
  type IndexState,
  MISS,
  type ThreadData,
} from "./index-protocol.ts";
import { type PackedTable, packTable, type RawTable, transferables } from "./table.ts";

type Body = IndexRequest extends infer R ? (R extends unknown ? Omit<R, "id"> : never) : never;

interface Waiter {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

export class IndexThread {
  readonly #insertThreads: number;
  readonly #onLost: (message: string) => void;
  readonly #waiters = new Map<number, Waiter>();
  #thread: Worker;
  #next = 1;
  #closed = false;

  /** `onLost` is called when the thread died and a fresh one replaced it. */
  constructor(insertThreads: number, onLost: (message: string) => void) {
    this.#insertThreads = insertThreads;
    this.#onLost = onLost;
    this.#thread = this.#spawn();
  }

  #spawn(): Worker {
    const thread = new Worker(new URL("./index-thread.ts", import.meta.url), {
      workerData: { insertThreads: this.#insertThreads } satisfies ThreadData,
    });
    thread.on("message", (answer: IndexAnswer) => {
      const waiter = this.#waiters.get(answer.id);
      if (waiter === undefined) return;
      this.#waiters.delete(answer.id);
      if (this.#waiters.size === 0) thread.unref();
      if (answer.ok) waiter.resolve(answer.value);
      else waiter.reject(storeError("internal_error", `search index: ${answer.message}`));
    });
    thread.on("error", (error) => this.#lost(thread, error.message));
    thread.on("exit", () => this.#lost(thread, "the search index thread exited"));
    // An idle thread never keeps the store's process alive; one with a call waiting does
    // (#call), or a caller awaiting it (a checkpoint at close, after the socket and every
    // timer are gone) would see the process end under it, its promise never settled.
    thread.unref();
    return thread;
  }

  #lost(thread: Worker, message: string): void {
    if (thread !== this.#thread || this.#closed) return;
    for (const waiter of this.#waiters.values())
      waiter.reject(storeError("internal_error", message));
    this.#waiters.clear();
    this.#thread = this.#spawn();
    this.#onLost(message);
  }

  #call(body: Body, transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.#closed) return Promise.reject(storeError("internal_error", "the store is closing"));
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      if (this.#waiters.size === 0) this.#thread.ref();
      this.#waiters.set(id, { resolve, reject });
      this.#thread.postMessage({ ...body, id }, transfer);
    });
  }

  /** Hands the head's table over (its buffers move to the thread). */
  table(head: string, table: RawTable): Promise<unknown> {
    const packed = packTable(table);
    return this.#call({ type: "table", head, table: packed }, transferables(packed));
  }

  /** Applies a diff to the head's table and index, each if it is at `from`. */
  advance(
    head: string,
    from: number,
    to: number,
    removed: readonly string[],
    set: RawTable,
  ): Promise<IndexState | null> {
    const packed = packTable(set);
    const body: Body = { type: "advance", head, from, to, removed, set: packed };
    return this.#call(body, transferables(packed)) as Promise<IndexState | null>;
  }

  /** Exact search of the head's table at `version` (or of `table`); undefined on a miss. */
  async exact(
    where: { head: string; version: number } | { table: RawTable },
    question: Float32Array,
    k: number,
    prefix: string | undefined,
  ): Promise<VectorHit[] | undefined> {
    let answer: unknown;
    if ("table" in where) {
      const table: PackedTable = packTable(where.table);
      const body: Body = { type: "exact", table, version: table.version, question, k };
      answer = await this.#call(prefix === undefined ? body : { ...body, prefix }, [
        ...transferables(table),
      ]);
    } else {
      const body: Body = { type: "exact", ...where, question, k };
      answer = await this.#call(prefix === undefined ? body : { ...body, prefix });
    }
    return answer === MISS ? undefined : (answer as VectorHit[]);
  }

  /** HNSW search of the head's index at `version`; undefined on a miss. */
  async search(
    head: string,
    version: number,
    question: Float32Array,
    k: number,
  ): Promise<VectorHit[] | undefined> {
    const answer = await this.#call({ type: "search", head, version, question, k });
    return answer === MISS ? undefined : (answer as VectorHit[]);
  }

  /** Builds the head's index from its table at `version`; undefined when it was not there. */
  async build(head: string, version: number): Promise<IndexState | undefined> {
    const answer = await this.#call({ type: "build", head, version });
    return answer === MISS ? undefined : (answer as IndexState);
  }

  save(
    head: string,
    dir: string,
    where: { collection: string; branch: string },
  ): Promise<{ checkpoint: Checkpoint; state: IndexState } | null> {
    return this.#call({ type: "save", head, dir, where }) as Promise<{
      checkpoint: Checkpoint;
      state: IndexState;
    } | null>;
  }

  load(head: string, dir: string, checkpoint: Checkpoint): Promise<IndexState> {
    return this.#call({ type: "load", head, dir, checkpoint }) as Promise<IndexState>;
  }

  drop(head: string, what: "all" | "index"): Promise<unknown> {
    return this.#call({ type: "drop", head, what });
  }

  /** Ends the thread; calls still waiting (a build under way) fail. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const waiter of this.#waiters.values()) {
      waiter.reject(storeError("internal_error", "the store is closing"));
    }
    this.#waiters.clear();
    await this.#thread.terminate();
  }
}
