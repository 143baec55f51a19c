/**
 * What every engine operation shares: the LMDB tables, the resolved settings, the store's
 * fixed shape (shard count, cache budget) and one node reader per shard. Operations are
 * plain functions over a context; `Store` (store.ts) wires them into one object.
 *
 * Node caching: each shard has one byte-bounded LRU of decoded nodes, shared by the
 * branches open on it (nodes are immutable and shared between versions, so one copy
 * serves all). Its capacity is branch_cache_bytes_per_shard for each branch opened since
 * start-up, capped by that shard's share of create.cache_bytes_total.
 */

import { nodeCodec } from "../codec/node-codec.ts";
import { type BranchRecord, type MetaRecord, VERSION_KEY } from "../codec/records.ts";
import type { BranchKey, StoreDatabase } from "../lmdb/database.ts";
import { SHARD_SEED, stringHash32 } from "../tree/hash.ts";
import { NodeCache } from "../tree/node-cache.ts";
import { NodeReader } from "../tree/node-store.ts";
import type { EngineSettings } from "./options.ts";
import { CommitPipeline } from "./pipeline.ts";

/**
 * What a commit asks of a node sweep in progress: keep the nodes it writes. The context holds
 * sweeps by this face only, so it does not depend on gc.ts (which depends on the context).
 */
export interface NodeGuard {
  protect(hash: string): void;
}

export class StoreContext {
  readonly db: StoreDatabase;
  readonly settings: EngineSettings;
  readonly meta: MetaRecord;
  readonly readers: readonly NodeReader[];
  readonly #openBranches = new Set<string>();
  /**
   * Branch records by collection and branch, read through from LMDB. This process is the
   * store's only writer, so every write updates or drops the entry. A pipelined commit
   * updates it when built, before it is durable (the next commit builds on it); reads run
   * only once the pipeline is idle, and a failed flush drops the entries (`reload`).
   */
  readonly branchRecords = new Map<string, BranchRecord>();
  /** The version the next commit receives; versions are store-wide and only increase. */
  nextVersion: number;
  /** Release runs and history rows they released since the store opened (for metrics). */
  readonly releases = { runs: 0, released: 0 };
  /** Branch advances since the retention driver last ran. */
  advancesSinceRelease = 0;
  /** The branch the release driver last released from; the next release starts after it. */
  releaseCursor: BranchKey | undefined;
  /** Commits built but not yet durable (pipeline.ts). */
  readonly pipeline: CommitPipeline;
  /** Node sweeps in progress (gc.ts): every node a commit writes is protected from them. */
  readonly sweeps = new Set<NodeGuard>();
  /**
   * Roots of versions being read across turns (record-scan.ts): a node sweep marks from
   * them too, so a version released while a query reads it stays whole until it ends.
   */
  readonly pinnedRoots = new Set<{ readonly roots: readonly (string | null)[] }>();
  /**
   * Versions that derived data still reads from, by branch id and holder: a search index is
   * caught up by the diff from the version it holds, which must stay retained until it has
   * moved on. The release driver keeps a held history row and every newer one of its
   * branch. In memory only: holders hold again when the store opens.
   */
  readonly holds = new Map<string, Map<string, number>>();

  constructor(db: StoreDatabase, settings: EngineSettings, meta: MetaRecord, nextVersion: number) {
    this.db = db;
    this.settings = settings;
    this.meta = meta;
    this.nextVersion = nextVersion;
    const readers: NodeReader[] = [];
    for (let s = 0; s < meta.shards; s++) {
      readers.push(new NodeReader(db, nodeCodec, new NodeCache(this.#shardCapacity(1))));
    }
    this.readers = readers;
    this.pipeline = new CommitPipeline(
      db,
      readers,
      () => this.reload(),
      (bytes) => nodeCodec.release(bytes),
    );
    for (const reader of readers) reader.pending = this.pipeline.pending;
  }

  /** Forgets cached branch records and the version counter: LMDB has the truth. */
  reload(): void {
    this.branchRecords.clear();
    this.nextVersion = this.db.counters.get(VERSION_KEY) ?? this.nextVersion;
  }

  get shards(): number {
    return this.meta.shards;
  }

  /** The shard of a key: a document's log entries (key NUL seq) follow the document. */
  shardOf(key: string): number {
    const cut = key.indexOf("\u0000");
    const placed = cut < 0 ? key : key.slice(0, cut);
    return stringHash32(placed, SHARD_SEED) % this.meta.shards;
  }

  /** Notes that a branch is in use, growing the shard caches by its share. */
  touchBranch(collection: string, branch: string): void {
    const id = `${collection}\u0000${branch}`;
    if (this.#openBranches.has(id)) return;
    this.#openBranches.add(id);
    const capacity = this.#shardCapacity(this.#openBranches.size);
    for (const reader of this.readers) reader.cache.resize(capacity);
  }

  #shardCapacity(openBranches: number): number {
    const share = Math.floor(this.meta.cacheBytesTotal / this.meta.shards);
    return Math.min(share, this.settings.branchCacheBytesPerShard * openBranches);
  }
}

export function branchId(collection: string, branch: string): string {
  return `${collection}\u0000${branch}`;
}

/** What `store.stats` reports of the engine: shards, the next version, node figures. */
export function storeStats(ctx: StoreContext): {
  shards: number;
  next_version: number;
  node_entries: number;
  node_bytes: number;
} {
  const nodes = ctx.db.nodeBytes();
  return {
    shards: ctx.shards,
    next_version: ctx.nextVersion,
    node_entries: nodes.entries,
    node_bytes: nodes.bytes,
  };
}
