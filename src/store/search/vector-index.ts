/**
 * The vector side's state of each branch head, kept by the event loop while the work runs
 * on the index thread (index-thread.ts): per head, the companion version of the thread's
 * vector table (what exact search at the head scans) and of its HNSW index, the index's
 * checkpoint under `DATA_DIR/search/vectors/`, and the build or load under way. The loop
 * reads the store in slices, hands vectors over and swaps in what the thread answers.
 *
 * A search at the head asks for the index at the head's companion version: an index
 * behind it is caught up first from the diff when the diff is small (at most
 * `CATCH_UP_MOST` records), else the search is exact and the background catches the
 * index up. So a search never reads a stale index: it is caught up or bypassed. An index
 * is built on the thread the first time a head with at least `indexMin` records is
 * searched; until it is swapped in, searches are exact. Changes to a head's table and
 * index go through one chain per head, so two requests never apply one diff twice.
 * Indexes are checkpointed at most every `CHECKPOINT_MS` and at close; a store killed at
 * any point reopens with its last checkpoint and catches up from there. Each index holds its version from release (`Store.hold`) until it has
 * caught up past it, so retention never takes the start of the diff an index needs.
 */

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { SkeinError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import { companionOf } from "../embed/fields.ts";
import type { Store } from "../engine/index.ts";
import { checkpointBytes, forgetCheckpoint, openCheckpoints } from "./checkpoints.ts";
import { readDiffPaced } from "./diff.ts";
import type { VectorHit } from "./exact.ts";
import { embeddedHead } from "./heads.ts";
import { removeCheckpointFiles } from "./hnsw.ts";
import { IndexThread } from "./index-client.ts";
import { type Head, headName, newHead, serial } from "./index-head.ts";
import { diffTable, readTable, turn } from "./table-reader.ts";
import type { Trace, TraceEvent } from "./trace.ts";

/** Most changed records a search applies to an index before answering (more: exact). */
export const CATCH_UP_MOST = 2000;
/** Most changed records the background applies from one diff (more: a rebuild). */
const BACKGROUND_DIFF_MOST = 200_000;
/** Least time between two checkpoints of one index. */
export const CHECKPOINT_MS = 2000;
/** The holder name of the vector indexes' versions (`Store.hold`). */
const HOLDER = "search.vectors";

/** Where an exact search looks: a companion version of a branch, under a key prefix. */
export interface ExactWhere {
  readonly collection: string;
  readonly branch: string;
  readonly version: number;
  readonly prefix: string | undefined;
}

export class VectorIndexes {
  readonly #store: Store;
  readonly #dir: string;
  readonly #indexMin: number;
  readonly #log: Logger;
  readonly #trace: Trace | undefined;
  readonly #heads = new Map<string, Head>();
  readonly #thread: IndexThread;
  /** The last diff applied to an index: its records and the time it took (benchmarks). */
  lastUpdate: { records: number; ms: number } | undefined;
  /** Full builds finished since the store opened (each one reads every vector of a head). */
  builds = 0;

  constructor(store: Store, dataDir: string, indexMin: number, log: Logger, trace?: Trace) {
    this.#store = store;
    this.#trace = trace;
    this.#dir = join(dataDir, "search", "vectors");
    this.#indexMin = indexMin;
    this.#log = log;
    mkdirSync(this.#dir, { recursive: true });
    this.#thread = new IndexThread(0, (message) => this.#lost(message));
    this.#openCheckpoints();
  }

  /** Takes each current checkpoint's head and holds its version. */
  #openCheckpoints(): void {
    for (const checkpoint of openCheckpoints(this.#dir)) {
      const head = this.#head(checkpoint.collection, checkpoint.branch);
      head.checkpoint = checkpoint;
      this.#hold(head, checkpoint.version);
    }
  }

  /** The thread died and a fresh one replaced it: nothing handed over is there any more. */
  #lost(message: string): void {
    this.#log.error({}, `search index thread lost, reloading indexes: ${message}`);
    for (const head of this.#heads.values()) {
      head.tableAt = undefined;
      head.index = undefined;
      head.pending = false;
    }
  }

  /** Keeps the companion version `version` of the head's branch from release (undefined: none). */
  #hold(head: Head, version: number | undefined): void {
    this.#store.hold(HOLDER, companionOf(head.collection), head.branch, version);
  }

  #head(collection: string, branch: string): Head {
    const name = headName(collection, branch);
    let head = this.#heads.get(name);
    if (head === undefined) {
      head = newHead(collection, branch, name);
      this.#heads.set(name, head);
    }
    return head;
  }

  /**
   * The HNSW answer at companion version `version` (the head's), the index caught up if it
   * is a little behind; undefined when the search must be exact.
   */
  async search(
    collection: string,
    branch: string,
    version: number,
    records: number,
    question: Float32Array,
    k: number,
  ): Promise<VectorHit[] | undefined> {
    const head = this.#head(collection, branch);
    this.#load(head);
    if (head.index === undefined) {
      if (records >= this.#indexMin && !head.pending) this.#startBuild(head, version);
      return undefined;
    }
    if (head.index.version > version) return undefined;
    if (head.index.version < version) {
      await serial(head, () => this.#follow(head, version, CATCH_UP_MOST));
      if (head.index?.version !== version) return undefined;
    }
    return this.#thread.search(head.name, version, question, k);
  }

  /**
   * Exact search at companion version `where.version` (under `where.prefix`). At the head
   * (`atHead`) it scans the head's table, read or caught up first when it is not at that
   * version; elsewhere, or when the head's table moved on meanwhile, a table read for this
   * question alone.
   */
  async exact(
    where: ExactWhere,
    question: Float32Array,
    k: number,
    atHead: boolean,
  ): Promise<VectorHit[]> {
    const { collection, branch, version, prefix } = where;
    if (atHead) {
      const head = this.#head(collection, branch);
      if (head.tableAt !== version) await serial(head, () => this.#tableAt(head, version));
      const hits = await this.#thread.exact({ head: head.name, version }, question, k, prefix);
      if (hits !== undefined) return hits;
    }
    const read = { collection: companionOf(collection), branch, version };
    const table = await readTable(this.#store, read, prefix);
    return (await this.#thread.exact({ table }, question, k, undefined)) ?? [];
  }

  /** Brings the thread's table to `version`: from the diff when small, else read whole. */
  async #tableAt(head: Head, version: number): Promise<void> {
    if (head.tableAt === version) return;
    if (head.tableAt !== undefined && head.tableAt < version) {
      await this.#follow(head, version, CATCH_UP_MOST);
      if (head.tableAt === version) return;
    }
    const where = { collection: companionOf(head.collection), branch: head.branch, version };
    const rows = embeddedHead(this.#store, head.collection, head.branch)?.count;
    const table = await readTable(this.#store, where, undefined, rows);
    if (head.tableAt !== undefined && head.tableAt > version) return;
    head.tableAt = version;
    await this.#thread.table(head.name, table);
  }

  /**
   * Applies the diffs from the table's and the index's versions to `version`. A part whose
   * diff is longer than `most` (or gone) is left behind: the table is read anew when next
   * needed; the index is for the caller to bypass or rebuild. True if the index is at it.
   */
  async #follow(head: Head, version: number, most: number): Promise<boolean> {
    const froms = new Set([head.tableAt, head.index?.version]);
    for (const from of froms) {
      if (from === undefined || from >= version) continue;
      const start = performance.now();
      const where = { collection: companionOf(head.collection), branch: head.branch };
      const diff = await readDiffPaced(this.#store, where, from, version, most, turn);
      const forIndex = head.index?.version === from;
      if (typeof diff === "string") {
        if (head.tableAt === from) head.tableAt = undefined;
        continue;
      }
      const { removed, set } = diffTable(diff, version);
      const event = this.#event(head, "catch_up", diff.length);
      this.#trace?.(event, "start");
      if (head.tableAt === from) head.tableAt = version;
      const sent = this.#thread.advance(head.name, from, version, removed, set);
      if (!forIndex) continue;
      head.index = { ...head.index!, version };
      head.index = (await sent) ?? undefined;
      this.#trace?.(event, "end");
      this.#hold(head, version);
      this.lastUpdate = { records: diff.length, ms: performance.now() - start };
    }
    return head.index?.version === version;
  }

  /** Starts loading the head's checkpoint into the thread, if it has one and no index. */
  #load(head: Head): void {
    if (head.index !== undefined || head.pending || head.checkpoint === undefined) return;
    head.pending = true;
    const checkpoint = head.checkpoint;
    void serial(head, async () => {
      try {
        head.index = await this.#thread.load(head.name, this.#dir, checkpoint);
        head.savedAt = performance.now();
      } catch (error) {
        this.#log.warn(
          { collection: head.collection, branch: head.branch },
          `search index checkpoint unreadable, rebuilding: ${(error as Error).message}`,
        );
        this.#forgetFiles(head);
        this.#hold(head, undefined);
      } finally {
        head.pending = false;
      }
    });
  }

  /** Builds the head's index on the thread from its table at `version`, then swaps it in. */
  #startBuild(head: Head, version: number): void {
    head.pending = true;
    const event = this.#event(head, "build");
    this.#hold(head, version);
    this.#trace?.(event, "start");
    const started = serial(head, async () => {
      await this.#tableAt(head, version);
      // Wrapped, so the chain does not wait for it: diffs keep moving the table meanwhile.
      return { built: this.#thread.build(head.name, head.tableAt ?? version) };
    });
    void started
      .then(({ built }) => built)
      .then((state) => {
        this.#trace?.(event, "end");
        if (state === undefined || this.#heads.get(head.name) !== head) return;
        this.builds++;
        head.index = state;
        this.#hold(head, state.version);
        this.#log.info(
          { collection: head.collection, branch: head.branch, records: state.records },
          "search index built",
        );
        return this.#save(head);
      })
      .catch((error) => this.#warn(head, error))
      .finally(() => {
        head.pending = false;
      });
  }

  /**
   * One round of background work (the pipeline idle): catching indexes and tables up to
   * their head, rebuilds, checkpoints, and forgetting the indexes of branches that are
   * gone. True if anything was started.
   */
  step(): boolean {
    let worked = false;
    for (const head of [...this.#heads.values()]) {
      try {
        if (this.#stepHead(head)) worked = true;
      } catch (error) {
        this.#warn(head, error);
      }
    }
    return worked;
  }

  #warn(head: Head, error: unknown): void {
    const code = (error as SkeinError).code;
    if (code === "branch_not_found" || code === "collection_not_found") {
      this.forget(head.collection, head.branch);
      return;
    }
    this.#log.warn(
      { collection: head.collection, branch: head.branch, code },
      `search index: ${(error as Error).message}`,
    );
  }

  #stepHead(head: Head): boolean {
    if (head.pending || head.saving) return false;
    this.#load(head);
    const index = head.index;
    if (index === undefined) {
      // A checkpoint that could not be read, or one of a branch that is gone.
      this.#store.history(companionOf(head.collection), head.branch, undefined, 1);
      return false;
    }
    const target = embeddedHead(this.#store, head.collection, head.branch);
    if (target !== undefined && target.companion !== index.version) {
      head.saving = true;
      void serial(head, async () => {
        const caught = await this.#follow(head, target.companion, BACKGROUND_DIFF_MOST);
        if (!caught && head.index?.version === index.version) this.#rebuild(head, target.companion);
      })
        .catch((error) => this.#warn(head, error))
        .finally(() => {
          head.saving = false;
        });
      return true;
    }
    // Dead points (hnsw.ts) cost memory and search breadth: once they outnumber the live
    // ones, rebuild, so an index is rebuilt at most once per as many changes as it holds.
    if (index.wasteful) {
      this.#rebuild(head, index.version);
      return true;
    }
    if (
      index.version !== head.checkpoint?.version &&
      performance.now() - head.savedAt >= CHECKPOINT_MS
    ) {
      void this.#save(head).catch((error) => this.#warn(head, error));
      return true;
    }
    return false;
  }

  #rebuild(head: Head, version: number): void {
    head.index = undefined;
    void this.#thread.drop(head.name, "index");
    this.#startBuild(head, version);
  }

  /** Checkpoints the head's index on the thread; the new checkpoint replaces the last. */
  async #save(head: Head): Promise<void> {
    head.saving = true;
    const event = this.#event(head, "checkpoint", head.index?.records);
    this.#trace?.(event, "start");
    try {
      const where = { collection: head.collection, branch: head.branch };
      const saved = await this.#thread.save(head.name, this.#dir, where);
      this.#trace?.(event, "end");
      if (saved === null) return;
      const previous = head.checkpoint;
      head.checkpoint = saved.checkpoint;
      head.savedAt = performance.now();
      if (previous !== undefined) removeCheckpointFiles(this.#dir, previous);
      if (this.#heads.get(head.name) !== head) this.#forgetFiles(head);
    } finally {
      head.saving = false;
    }
  }

  #event(head: Head, update: TraceEvent["update"], records?: number): TraceEvent {
    const where = { index: "vector" as const, update, collection: head.collection };
    return { ...where, branch: head.branch, ...(records === undefined ? {} : { records }) };
  }

  #forgetFiles(head: Head): void {
    forgetCheckpoint(this.#dir, head.name, head.checkpoint);
    head.checkpoint = undefined;
  }

  /** Drops the indexes of a branch (or every branch of a collection) and their files. */
  forget(collection: string, branch?: string): void {
    for (const [name, head] of this.#heads) {
      if (head.collection !== collection || (branch !== undefined && head.branch !== branch))
        continue;
      void this.#thread.drop(name, "all").catch(() => {});
      this.#forgetFiles(head);
      this.#hold(head, undefined);
      this.#heads.delete(name);
    }
  }

  /** Checkpoints every index that moved since its last checkpoint, then ends the thread. */
  async close(): Promise<void> {
    for (const head of this.#heads.values()) {
      await head.chain;
      if (head.index !== undefined && head.index.version !== head.checkpoint?.version) {
        await this.#save(head).catch((error) => this.#warn(head, error));
      }
    }
    await this.#thread.close();
  }

  stats(): { indexes: number; records: number; bytes: number; builds: number } {
    let records = 0;
    let bytes = 0;
    for (const head of this.#heads.values()) {
      records += head.index?.records ?? 0;
      bytes += checkpointBytes(this.#dir, head.checkpoint);
    }
    const indexes = [...this.#heads.values()].filter(
      (h) => h.index !== undefined || h.checkpoint !== undefined,
    ).length;
    return { indexes, records, bytes, builds: this.builds };
  }
}
