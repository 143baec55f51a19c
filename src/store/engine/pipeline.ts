/**
 * The commit pipeline: commits are built on the event loop while the previous batch of
 * commits is being flushed on lmdb-js's write thread, so a commit's CPU work (JSON,
 * chunking, encoding, hashing) overlaps the flush (fdatasync) of the commits before it.
 *
 *   idle ──add──▶ flushing(batch B) ──add──▶ flushing(B) + next(C, D…)
 *     ▲                 │ B durable: resolve B's commits, C… become the flushing batch
 *     └── nothing next ─┘ B failed: reject B and every next commit, reload from LMDB
 *
 * At most one batch is in LMDB's hands at a time. Commits added while it flushes join the
 * next batch and are written together (one transaction, one fsync) once it is durable; a
 * commit is built on the heads of the commits before it, durable or not, and their new
 * nodes stay readable from `pending` until they are durable. So:
 *
 * - Commits become durable in the order they were added, and their promises settle in that
 *   order (receipts are sent in commit order).
 * - A batch is submitted only after the one before it is durable, so a failed flush fails
 *   exactly that batch and everything built on it (the next batch, never submitted), and
 *   nothing built on a lost commit can reach the disk. The in-memory state those commits
 *   advanced is then dropped (`reload`).
 * - Nothing here shows a commit to readers: the engine's read operations run only when the
 *   pipeline is idle (store.ts), when every commit added is durable or has failed.
 *
 * `writeNow` is the synchronous path (in-process callers): it needs an idle pipeline and
 * writes one commit in a synchronous transaction.
 */

import { storeError } from "../errors.ts";
import type { CommitWriter, CommitWrites } from "../lmdb/database.ts";
import type { TreeNode } from "../tree/node.ts";
import type { NodeReader } from "../tree/node-store.ts";

/** A commit's new nodes, with their shard (whose cache receives them once durable). */
export type NewNodes = readonly (readonly [shard: number, node: TreeNode])[];

interface Batch {
  readonly writes: CommitWrites[];
  readonly nodes: (readonly [shard: number, node: TreeNode])[];
  readonly waiters: { resolve: () => void; reject: (error: unknown) => void }[];
}

export class CommitPipeline {
  /** Where batches become durable; replaceable to wrap it (fault injection, metrics). */
  writer: CommitWriter;
  readonly #readers: readonly NodeReader[];
  readonly #reload: () => void;
  /** New nodes of every commit not yet durable, by address (the readers consult it). */
  readonly pending = new Map<string, TreeNode>();
  #flushing: Batch | null = null;
  #next: Batch | null = null;
  #idleWaiters: (() => void)[] = [];

  /**
   * `reload` forgets the in-memory state (branch heads, version counter) that lost commits
   * advanced, so the next operation reads it back from LMDB.
   */
  constructor(writer: CommitWriter, readers: readonly NodeReader[], reload: () => void) {
    this.writer = writer;
    this.#readers = readers;
    this.#reload = reload;
  }

  /** True while some commit added is neither durable nor failed. */
  get busy(): boolean {
    return this.#flushing !== null;
  }

  /** Resolves once every commit added so far is durable or has failed. */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Refuses a synchronous operation while commits are in flight (a caller's mistake). */
  assertIdle(): void {
    if (this.busy) {
      throw storeError(
        "internal_error",
        "pipelined commits are in flight: await the store's idle() before a synchronous call",
      );
    }
  }

  /**
   * Queues a built commit; resolves once it is durable, rejects with `internal_error` when
   * its batch, or one it was built on, failed to write.
   */
  add(writes: CommitWrites, nodes: NewNodes): Promise<void> {
    for (const [, node] of nodes) this.pending.set(node.hash, node);
    if (this.#flushing !== null && this.#next === null) this.#next = newBatch();
    const batch = this.#next ?? newBatch();
    batch.writes.push(writes);
    for (const entry of nodes) batch.nodes.push(entry);
    const durable = new Promise<void>((resolve, reject) => batch.waiters.push({ resolve, reject }));
    // Nothing in flight: this commit starts a flush at once; later ones overlap with it.
    if (this.#flushing === null) this.#flush(batch);
    return durable;
  }

  /** Writes one commit now, in a synchronous transaction; the pipeline must be idle. */
  writeNow(writes: CommitWrites, nodes: NewNodes): void {
    this.assertIdle();
    this.writer.writeCommits([writes]);
    // New nodes are the likeliest to be read next; keep them decoded.
    for (const [shard, node] of nodes) this.#readers[shard]!.cache.set(node);
  }

  #flush(batch: Batch): void {
    this.#flushing = batch;
    let written: Promise<void>;
    try {
      written = this.writer.writeCommitsDurably(batch.writes);
    } catch (error) {
      written = Promise.reject(error);
    }
    written.then(
      () => this.#durable(batch),
      (error: unknown) => this.#failed(batch, error),
    );
  }

  #durable(batch: Batch): void {
    for (const [shard, node] of batch.nodes) {
      this.#readers[shard]!.cache.set(node);
      this.pending.delete(node.hash);
    }
    const next = this.#next;
    this.#next = null;
    if (next !== null) this.#flush(next);
    else this.#flushing = null;
    this.#tell(() => {
      for (const waiter of batch.waiters) waiter.resolve();
    });
  }

  #failed(batch: Batch, error: unknown): void {
    const lost = [batch, ...(this.#next === null ? [] : [this.#next])];
    this.#flushing = null;
    this.#next = null;
    this.pending.clear();
    this.#reload();
    const reason = storeError(
      "internal_error",
      `a commit could not be written; it and the commits after it are lost: ${
        error instanceof Error ? error.message : String(error)
      }`,
    );
    this.#tell(() => {
      for (const lostBatch of lost) for (const waiter of lostBatch.waiters) waiter.reject(reason);
    });
  }

  /**
   * Settles commits on the next turn of the event loop, in order (setImmediate is FIFO),
   * then wakes `idle()` waiters if nothing is in flight. lmdb-js starts a handed-over
   * batch on its write thread from a setImmediate: callers told at once would build their
   * next commits in this same turn, and the next batch's flush would wait for them; told
   * after it has started, they build while it flushes.
   */
  #tell(settle: () => void): void {
    setImmediate(() => {
      settle();
      if (!this.busy) this.#wakeIdle();
    });
  }

  #wakeIdle(): void {
    const waiters = this.#idleWaiters.splice(0);
    for (const wake of waiters) wake();
  }
}

function newBatch(): Batch {
  return { writes: [], nodes: [], waiters: [] };
}
