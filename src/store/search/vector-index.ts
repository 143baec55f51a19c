/**
 * The HNSW indexes of branch heads, kept under `DATA_DIR/search/vectors/`. An index holds
 * one companion version (the vectors complete at one data version). A search at the head
 * asks for the index at the head's companion version: an index behind it is caught up at
 * once from the diff when the diff is small (at most `CATCH_UP_MOST` records), else the
 * search is exact and the index is caught up in the background. So a search never reads a
 * stale index: it is caught up or bypassed. An index is built in the background, in steps
 * between requests, the first time a branch with at least `indexMin` records is searched;
 * until it is ready searches are exact. Indexes are checkpointed (hnsw.ts) at most every
 * `CHECKPOINT_MS` and at close, so a store killed at any point reopens with its last
 * checkpoint and catches up from there. Each index holds its version from release
 * (`Store.hold`) until it has caught up past it, so retention never takes the start of
 * the diff an index needs: a release leads to no rebuild. The hold trails the head by at
 * most one background round while the store is idle.
 */

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { SkeinError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import { companionMarker } from "../embed/companions.ts";
import { companionOf } from "../embed/fields.ts";
import type { RecordScan, RecordText, Store } from "../engine/index.ts";
import { readDiff } from "./diff.ts";
import type { VectorHit } from "./exact.ts";
import { type Checkpoint, HnswIndex, removeCheckpointFiles } from "./hnsw.ts";
import { type Trace, type TraceEvent, traced } from "./trace.ts";
import { decodeStored } from "./vectors.ts";

/**
 * Most changed records a search applies to an index before answering (about 1 ms each on a
 * loaded 2-core machine, so a search is delayed at most a few seconds; more: exact).
 */
export const CATCH_UP_MOST = 2000;
/** Most changed records the background applies from one diff (more: a rebuild). */
const BACKGROUND_DIFF_MOST = 200_000;
/** Records read per call to the addon during a build. */
const BUILD_BATCH = 64;
/** A build step's time: requests are served between steps. */
const BUILD_STEP_MS = 50;
/** Least time between two checkpoints of one index. */
export const CHECKPOINT_MS = 2000;
/** The holder name of the vector indexes' versions (`Store.hold`). */
const HOLDER = "search.vectors";

interface Head {
  readonly collection: string;
  readonly branch: string;
  readonly name: string;
  index: HnswIndex | undefined;
  checkpoint: Checkpoint | undefined;
  savedAt: number;
  build: Build | undefined;
}

interface Build {
  readonly scan: RecordScan;
  readonly version: number;
  readonly event: TraceEvent;
  index: HnswIndex | undefined;
}

/** The companion version complete at the branch's latest embedded data version. */
export function embeddedHead(
  store: Store,
  collection: string,
  branch: string,
): { companion: number; data: number; count: number } | undefined {
  const companion = companionOf(collection);
  const marker = companionMarker(store, companion, branch);
  if (
    marker === undefined ||
    marker.to !== undefined ||
    marker.branch !== branch ||
    marker.at === 0
  )
    return undefined;
  const row = store.history(companion, branch, undefined, 1).rows[0];
  return row === undefined
    ? undefined
    : { companion: row.version, data: marker.at, count: marker.count };
}

export class VectorIndexes {
  readonly #store: Store;
  readonly #dir: string;
  readonly #indexMin: number;
  readonly #log: Logger;
  readonly #trace: Trace | undefined;
  readonly #heads = new Map<string, Head>();
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
    this.#openCheckpoints();
  }

  /** Reads every current checkpoint and deletes files no checkpoint names (a killed save). */
  #openCheckpoints(): void {
    const named = new Set<string>();
    for (const file of readdirSync(this.#dir)) {
      if (!file.endsWith(".json") || file.endsWith(".labels.json")) continue;
      try {
        const checkpoint = JSON.parse(readFileSync(join(this.#dir, file), "utf8")) as Checkpoint;
        const head = this.#head(checkpoint.collection, checkpoint.branch);
        head.checkpoint = checkpoint;
        this.#hold(head, checkpoint.version);
        named.add(file).add(checkpoint.index).add(checkpoint.labels);
      } catch {
        // A damaged checkpoint name: the index is rebuilt when next searched.
      }
    }
    for (const file of readdirSync(this.#dir)) {
      if (!named.has(file)) rmSync(join(this.#dir, file), { force: true });
    }
  }

  /** Keeps the companion version `version` of the head's branch from release (undefined: none). */
  #hold(head: Head, version: number | undefined): void {
    this.#store.hold(HOLDER, companionOf(head.collection), head.branch, version);
  }

  #head(collection: string, branch: string): Head {
    const name = createHash("sha256")
      .update(`${collection}\u0000${branch}`)
      .digest("hex")
      .slice(0, 32);
    let head = this.#heads.get(name);
    if (head === undefined) {
      head = {
        collection,
        branch,
        name,
        index: undefined,
        checkpoint: undefined,
        savedAt: 0,
        build: undefined,
      };
      this.#heads.set(name, head);
    }
    return head;
  }

  /**
   * The index at companion version `version` of the branch, caught up if it is a little
   * behind; undefined when the search must be exact (no index yet, or too far behind).
   */
  at(collection: string, branch: string, version: number, records: number): HnswIndex | undefined {
    const head = this.#head(collection, branch);
    this.#load(head);
    const index = head.index;
    if (index === undefined) {
      if (records >= this.#indexMin && head.build === undefined) this.#startBuild(head, version);
      return undefined;
    }
    if (index.version === version) return index;
    if (index.version > version) return undefined;
    return this.#catchUp(head, index, version, CATCH_UP_MOST) ? index : undefined;
  }

  #load(head: Head): void {
    if (head.index !== undefined || head.checkpoint === undefined) return;
    try {
      head.index = HnswIndex.load(this.#dir, head.checkpoint);
      head.savedAt = performance.now();
    } catch (error) {
      this.#log.warn(
        { collection: head.collection, branch: head.branch },
        `search index checkpoint unreadable, rebuilding: ${(error as Error).message}`,
      );
      this.#forgetFiles(head);
      this.#hold(head, undefined);
    }
  }

  /** Applies the diff to `version`; false when there is none to apply (too long, or gone). */
  #catchUp(head: Head, index: HnswIndex, version: number, most: number): boolean {
    const start = performance.now();
    const companion = companionOf(head.collection);
    const diff = readDiff(
      this.#store,
      { collection: companion, branch: head.branch },
      index.version,
      version,
      most,
    );
    if (diff === "gone") {
      // Only if the index's version was released before it was held (an older store).
      head.index = undefined;
      this.#forgetFiles(head);
      this.#hold(head, undefined);
      return false;
    }
    if (diff === "too_many") return false;
    const event = this.#event(head, "catch_up", diff.length);
    traced(this.#trace, event, () => {
      for (const change of diff) if (change.type === "removed") index.remove(change.key);
      index.set(
        diff
          .filter((c) => c.type !== "removed")
          .map((c) => ({ key: c.key, windows: decodeStored(c.to) })),
      );
      index.version = version;
    });
    this.#hold(head, version);
    this.lastUpdate = { records: diff.length, ms: performance.now() - start };
    return true;
  }

  #startBuild(head: Head, version: number): void {
    const scan = this.#store.scanRecords({
      collection: companionOf(head.collection),
      branch: head.branch,
      version,
    });
    const event = this.#event(head, "build");
    head.build = { scan, version, event, index: undefined };
    this.#hold(head, version);
    this.#trace?.(event, "start");
  }

  /**
   * One round of background work between requests (the pipeline idle): a step of each
   * build, catching indexes up to their head, checkpoints, and forgetting the indexes of
   * branches that are gone. True if anything was done.
   */
  step(): boolean {
    let worked = false;
    for (const head of [...this.#heads.values()]) {
      try {
        if (this.#stepHead(head)) worked = true;
      } catch (error) {
        const code = (error as SkeinError).code;
        if (code === "branch_not_found" || code === "collection_not_found") {
          this.forget(head.collection, head.branch);
          continue;
        }
        this.#log.warn(
          { collection: head.collection, branch: head.branch, code },
          `search index: ${(error as Error).message}`,
        );
      }
    }
    return worked;
  }

  #stepHead(head: Head): boolean {
    if (head.build !== undefined) return this.#stepBuild(head);
    this.#load(head);
    const index = head.index;
    if (index === undefined) {
      // A checkpoint that could not be read, or one of a branch that is gone.
      this.#store.history(companionOf(head.collection), head.branch, undefined, 1);
      return false;
    }
    const target = embeddedHead(this.#store, head.collection, head.branch);
    let worked = false;
    if (target !== undefined && target.companion !== index.version) {
      worked = true;
      if (!this.#catchUp(head, index, target.companion, BACKGROUND_DIFF_MOST)) {
        head.index = undefined;
        this.#startBuild(head, target.companion);
        return true;
      }
    }
    // Dead points (hnsw.ts) cost memory and search breadth: once they outnumber the live
    // ones, rebuild, so an index is rebuilt at most once per as many changes as it holds.
    if (index.wasteful) {
      head.index = undefined;
      this.#startBuild(head, index.version);
      return true;
    }
    if (
      index.version !== head.checkpoint?.version &&
      performance.now() - head.savedAt >= CHECKPOINT_MS
    ) {
      this.#save(head, index);
      worked = true;
    }
    return worked;
  }

  #stepBuild(head: Head): boolean {
    const build = head.build!;
    const deadline = performance.now() + BUILD_STEP_MS;
    let batch: RecordText[];
    do {
      batch = build.scan.take(BUILD_BATCH);
      const records = batch.map(([key, json]) => ({
        key,
        windows: decodeStored(JSON.parse(json)),
      }));
      const dims = records.find((r) => r.windows.length > 0)?.windows[0]?.length;
      if (build.index === undefined && dims !== undefined)
        build.index = new HnswIndex(dims, build.version);
      build.index?.set(records);
    } while (batch.length > 0 && performance.now() < deadline);
    if (batch.length > 0) return true;
    build.scan.close();
    head.build = undefined;
    this.#trace?.(build.event, "end");
    if (build.index !== undefined) {
      this.builds++;
      head.index = build.index;
      this.#save(head, build.index);
      this.#log.info(
        { collection: head.collection, branch: head.branch, records: build.index.records },
        "search index built",
      );
    } else this.#hold(head, undefined);
    return true;
  }

  #save(head: Head, index: HnswIndex): void {
    const previous = head.checkpoint;
    const event = this.#event(head, "checkpoint", index.records);
    head.checkpoint = traced(this.#trace, event, () => index.save(this.#dir, head.name, head));
    head.savedAt = performance.now();
    if (previous !== undefined) removeCheckpointFiles(this.#dir, previous);
  }

  #event(head: Head, update: TraceEvent["update"], records?: number): TraceEvent {
    const where = { index: "vector" as const, update, collection: head.collection };
    return { ...where, branch: head.branch, ...(records === undefined ? {} : { records }) };
  }

  #forgetFiles(head: Head): void {
    if (head.checkpoint !== undefined) removeCheckpointFiles(this.#dir, head.checkpoint);
    rmSync(join(this.#dir, `${head.name}.json`), { force: true });
    head.checkpoint = undefined;
  }

  /** Drops the indexes of a branch (or every branch of a collection) and their files. */
  forget(collection: string, branch?: string): void {
    for (const [name, head] of this.#heads) {
      if (head.collection !== collection || (branch !== undefined && head.branch !== branch))
        continue;
      head.build?.scan.close();
      this.#forgetFiles(head);
      this.#hold(head, undefined);
      this.#heads.delete(name);
    }
  }

  /** Checkpoints every index that moved since its last checkpoint. */
  close(): void {
    for (const head of this.#heads.values()) {
      head.build?.scan.close();
      if (head.index !== undefined && head.index.version !== head.checkpoint?.version) {
        this.#save(head, head.index);
      }
    }
  }

  search(index: HnswIndex, question: Float32Array, k: number): VectorHit[] {
    return index.search(question, k);
  }

  stats(): { indexes: number; records: number; bytes: number; builds: number } {
    let records = 0;
    let bytes = 0;
    for (const head of this.#heads.values()) {
      records += head.index?.records ?? 0;
      if (head.checkpoint === undefined) continue;
      for (const file of [head.checkpoint.index, head.checkpoint.labels]) {
        const path = join(this.#dir, file);
        if (existsSync(path)) bytes += statSync(path).size;
      }
    }
    const indexes = [...this.#heads.values()].filter(
      (h) => h.index !== undefined || h.checkpoint !== undefined,
    ).length;
    return { indexes, records, bytes, builds: this.builds };
  }
}
