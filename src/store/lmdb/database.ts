/**
 * The only code that touches LMDB. One environment under `data_dir` holds nine tables:
 * `nodes` (address → encoded tree node), `meta`, `counters` (the version counter), `collections` (name → record),
 * `branches` ([collection, branch] → branch record), `history` ([collection, branch,
 * version] → version record, the heads that left a branch record's window), `tags`
 * ([collection, tag] → tag record), `graph` ([collection, version] → parents) and `pipeline`
 * (one versioned entry, the chain of pipelined commits). Writes go through `commit`, one
 * synchronous LMDB transaction (fsynced before it returns), or, for branch commits,
 * `writeCommits` (the same) and `writeCommitsAfter` (applied on lmdb-js's write thread; its
 * promise settles once the transaction is fsynced, so the event loop is free while the disk
 * flushes). Either way a crash at any moment leaves the last committed state and nothing
 * half-written.
 */

import { type Database, open, type RootDatabase } from "lmdb";
import { SkeinError } from "../../common/errors.ts";
import {
  type BranchRecord,
  type CollectionRecord,
  type MetaRecord,
  type TagRecord,
  VERSION_KEY,
  type VersionRecord,
} from "../codec/records.ts";
import { storeError } from "../errors.ts";
import type { NodeStore } from "../tree/node-store.ts";

export type BranchKey = [collection: string, branch: string];
export type HistoryKey = [collection: string, branch: string, version: number];
export type TagKey = [collection: string, tag: string];
export type GraphKey = [collection: string, version: number];

/** What one branch commit writes. */
export interface CommitWrites {
  /** New tree nodes: address and encoded bytes (left untouched until written). */
  readonly nodes: readonly (readonly [hash: string, bytes: Uint8Array])[];
  readonly branch: readonly [key: BranchKey, record: BranchRecord];
  /** Heads that left the branch record's kept_versions window. */
  readonly history: readonly (readonly [key: HistoryKey, record: VersionRecord])[];
  /** The version counter after this commit. */
  readonly nextVersion: number;
  /** The new version's parents in the collection's version graph. */
  readonly graph: readonly [key: GraphKey, parents: readonly number[]];
  /** Other branch records written with it (a merge moves the merged branch's fork point). */
  readonly also?: readonly (readonly [key: BranchKey, record: BranchRecord])[];
}

/** Where commits become durable; fault injection and metrics wrap this interface. */
export interface CommitWriter {
  /** Writes the commits, in order, in one synchronous transaction, fsynced on return. */
  writeCommits(commits: readonly CommitWrites[]): void;
  /** The mark of the last pipelined write that is durable (null before the first). */
  pipelineMark(): number | null;
  /**
   * Writes the commits, in order, in one transaction on the write thread, only if the last
   * pipelined write is the one marked `after`, and marks this one `mark`. Resolves true
   * once it is fsynced, false when it was skipped (the write marked `after` never
   * happened); rejects when the transaction failed.
   */
  writeCommitsAfter(
    commits: readonly CommitWrites[],
    after: number | null,
    mark: number,
  ): Promise<boolean>;
}

const PIPELINE_KEY = "tail";

export class StoreDatabase implements NodeStore, CommitWriter {
  readonly root: RootDatabase;
  readonly nodes: Database<Buffer, string>;
  readonly meta: Database<MetaRecord, string>;
  readonly counters: Database<number, string>;
  readonly collections: Database<CollectionRecord, string>;
  readonly branches: Database<BranchRecord, BranchKey>;
  readonly history: Database<VersionRecord, HistoryKey>;
  /** Named versions of a collection; each holds its own version record. */
  readonly tags: Database<TagRecord, TagKey>;
  /**
   * The version graph: each version's parents (none for a collection's first version, two
   * for a merge). Rows are a few bytes and are never released, so common ancestors can be
   * found after retention released the versions themselves.
   */
  readonly graph: Database<readonly number[], GraphKey>;
  /** The mark of the last pipelined write, as the entry's LMDB version. */
  readonly pipeline: Database<number, string>;

  /** The environment's directory (the data directory). */
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
    this.root = open({
      path: dir,
      maxDbs: 12,
      // Every commit is fsynced before it is acknowledged.
      noSync: false,
      overlappingSync: false,
      // Pipelined commits reach the write thread as soon as they are handed over, not at
      // the next turn of the event loop, which is busy building the next commits (the
      // overlap the pipeline is for). Each is one explicit conditional block, so still
      // one transaction (lmdb-js may put several blocks in one); nothing else here writes
      // asynchronously.
      eventTurnBatching: false,
      // Nodes are already compact MessagePack; compressing them costs more than it saves.
      compression: false,
    });
    this.nodes = this.root.openDB<Buffer, string>({ name: "nodes", encoding: "binary" });
    this.meta = this.root.openDB<MetaRecord, string>({ name: "meta" });
    this.counters = this.root.openDB<number, string>({ name: "counters" });
    this.collections = this.root.openDB<CollectionRecord, string>({ name: "collections" });
    this.branches = this.root.openDB<BranchRecord, BranchKey>({ name: "branches" });
    this.history = this.root.openDB<VersionRecord, HistoryKey>({ name: "history" });
    this.pipeline = this.root.openDB<number, string>({ name: "pipeline", useVersions: true });
    this.tags = this.root.openDB<TagRecord, TagKey>({ name: "tags" });
    this.graph = this.root.openDB<readonly number[], GraphKey>({ name: "graph" });
  }

  get(hash: string): Uint8Array | undefined {
    return this.nodes.getBinary(hash);
  }

  /**
   * Runs `action` in one synchronous, durable write transaction. A transaction LMDB could
   * not write (ENOSPC, EIO) is aborted whole and refused with `internal_error`.
   */
  commit<T>(action: () => T): T {
    try {
      return this.root.transactionSync(action);
    } catch (error) {
      throw error instanceof SkeinError ? error : notWritten(error);
    }
  }

  putNode(hash: string, bytes: Uint8Array): void {
    this.nodes.putSync(hash, asBuffer(bytes));
  }

  /** Writes the commits, in order, in one synchronous durable transaction. */
  writeCommits(commits: readonly CommitWrites[]): void {
    this.commit(() => {
      for (const commit of commits) {
        for (const [hash, bytes] of commit.nodes) this.putNode(hash, bytes);
        this.branches.putSync(commit.branch[0], commit.branch[1]);
        for (const [key, row] of commit.history) this.history.putSync(key, row);
        this.graph.putSync(commit.graph[0], commit.graph[1]);
        for (const [key, record] of commit.also ?? []) this.branches.putSync(key, record);
        this.counters.putSync(VERSION_KEY, commit.nextVersion);
      }
    });
  }

  pipelineMark(): number | null {
    return this.pipeline.getEntry(PIPELINE_KEY)?.version ?? null;
  }

  /**
   * One conditional block (`ifVersion` on the pipeline entry): the puts are queued here
   * and applied on the write thread, all or none, and only if the entry still has the
   * version `after` (absent for null) when the block runs. So a commit built on one whose
   * transaction failed is skipped by LMDB itself, even though it was handed over before the
   * failure was known. With `overlappingSync: false` the promise settles after the fsync.
   * lmdb-js reads the value buffers (views of the node codec's arenas) when it writes them;
   * the pipeline releases them to the codec for reuse only after this settles.
   */
  writeCommitsAfter(
    commits: readonly CommitWrites[],
    after: number | null,
    mark: number,
  ): Promise<boolean> {
    // lmdb-js reads a null version as "only if the entry does not exist".
    const written = this.pipeline.ifVersion(PIPELINE_KEY, after as number, () => {
      for (const commit of commits) {
        for (const [hash, bytes] of commit.nodes) void this.nodes.put(hash, asBuffer(bytes));
        void this.branches.put(commit.branch[0], commit.branch[1]);
        for (const [key, row] of commit.history) void this.history.put(key, row);
        void this.graph.put(commit.graph[0], commit.graph[1]);
        for (const [key, record] of commit.also ?? []) void this.branches.put(key, record);
        void this.counters.put(VERSION_KEY, commit.nextVersion);
      }
      void this.pipeline.put(PIPELINE_KEY, mark, mark);
    });
    return written.catch(writeFailure);
  }

  /** Bytes of pages used by the node table (what a release should make fall). */
  nodeBytes(): { entries: number; bytes: number } {
    const stats = this.nodes.getStats() as {
      entryCount: number;
      pageSize: number;
      treeBranchPageCount: number;
      treeLeafPageCount: number;
      overflowPages: number;
    };
    const pages = stats.treeBranchPageCount + stats.treeLeafPageCount + stats.overflowPages;
    return { entries: stats.entryCount, bytes: pages * stats.pageSize };
  }

  close(): Promise<void> {
    return this.root.close();
  }
}

/**
 * How lmdb-js reports a failed write transaction (a full disk: ENOSPC; a failing one: EIO):
 * every promise of the transaction rejects with a generic "Commit failed" error whose
 * `commitError` is a second promise, rejected a moment later (in the same callback of the
 * write thread) with LMDB's own error. Nothing else holds that second promise, so left
 * alone it is an unhandled rejection, which ends the process. Handled here, and its reason
 * (errno text and page position, no record contents) becomes the failure's message. The
 * environment stays usable: LMDB aborts the transaction and the next one starts from the
 * last committed state.
 */
async function writeFailure(error: unknown): Promise<never> {
  const detail = (error as { commitError?: unknown } | null)?.commitError;
  if (!(detail instanceof Promise)) throw error;
  // Already rejected when this runs; the fallback only guards against a change in lmdb-js.
  const cause = await Promise.race([
    detail.then(
      () => error,
      (reason: unknown) => reason,
    ),
    new Promise((resolve) => setImmediate(resolve, error)),
  ]);
  throw cause instanceof Error ? cause : error;
}

function notWritten(error: unknown): SkeinError {
  return storeError(
    "internal_error",
    `the write transaction failed: ${error instanceof Error ? error.message : String(error)}`,
  );
}

function asBuffer(bytes: Uint8Array): Buffer {
  // The node codec's bytes are Buffers already (views of its arenas): no second view each.
  if (Buffer.isBuffer(bytes)) return bytes;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
