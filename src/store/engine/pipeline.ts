/**
 * The commit pipeline: commits are built on the event loop while the commits before them
 * are written and flushed on lmdb-js's write thread, so a commit's CPU work (JSON,
 * chunking, encoding, hashing) overlaps the flush (fdatasync) of the ones before it.
 *
 *   built ──add──▶ handed to LMDB ──fsynced──▶ durable: told, nodes to the cache
 *                        │ its transaction failed, or skipped (one before it was lost)
 *                        ▼
 *                      lost: told internal_error; the first loss reloads from LMDB
 *
 * Each commit is handed to LMDB as soon as it is built, as one conditional block chained
 * to the commit before it (`writeCommitsAfter`: the block runs only if the previous
 * pipelined commit's mark is the last one written, and writes its own). lmdb-js applies
 * the blocks in order and puts those queued while it flushes into one next transaction
 * (the group commit of concurrent writers), starting it without waiting for the event
 * loop. A commit is built on the heads of the commits before it, durable or not; their new
 * nodes stay readable from `pending` until they are durable. So:
 *
 * - Commits become durable in the order they were added, and are told in that order
 *   (receipts are sent in commit order).
 * - If a transaction fails, every commit after it is skipped by LMDB (the mark it is
 *   chained to was never written), so nothing built on a lost commit reaches the disk. The
 *   first loss drops the in-memory state those commits advanced (`reload`) and restarts
 *   the chain from the last durable mark; the lost commits are told `internal_error`.
 * - Nothing here shows a commit to readers: the engine's read operations run only when the
 *   pipeline is idle (store.ts), when every commit added is durable or lost.
 *
 * `writeNow` is the synchronous path (in-process callers): it needs an idle pipeline and
 * writes one commit in a synchronous transaction (outside the chain, which it leaves as is).
 */

import { storeError } from "../errors.ts";
import type { CommitWriter, CommitWrites } from "../lmdb/database.ts";
import type { TreeNode } from "../tree/node.ts";
import type { NodeReader } from "../tree/node-store.ts";

/** A commit's new nodes, with their shard (whose cache receives them once durable). */
export type NewNodes = readonly (readonly [shard: number, node: TreeNode])[];

interface InFlight {
  readonly nodes: NewNodes;
  readonly writes: CommitWrites;
  /** The mark this commit is chained to. */
  readonly after: number | null;
  /** Its own mark. */
  readonly mark: number;
  /** Which run of the chain it belongs to; a loss starts a new one. */
  readonly run: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export class CommitPipeline {
  /** Where commits become durable; replaceable to wrap it (fault injection, metrics). */
  writer: CommitWriter;
  readonly #readers: readonly NodeReader[];
  readonly #reload: () => void;
  readonly #release: (bytes: Uint8Array) => void;
  /** New nodes of every commit not yet durable, by address (the readers consult it). */
  readonly pending = new Map<string, TreeNode>();
  /** Commits added and not yet told their outcome. */
  #unsettled = 0;
  /** The mark the next commit chains to: the last commit added, or the last durable one. */
  #last: number | null;
  /**
   * The mark of the last commit known durable: where the chain restarts after a loss. (Not
   * the lost commit's `after`: outcomes can be reported out of order, a failed transaction's
   * reason arriving after the skip of a commit chained to it, and a restart from the
   * skipped commit's `after` would chain every later commit to a mark never written.)
   */
  #durableMark: number | null;
  /** The highest mark handed out; marks are never reused, even after a loss. */
  #marks: number;
  #run = 0;
  #idleWaiters: (() => void)[] = [];

  /**
   * `reload` forgets the in-memory state (branch heads, version counter) that lost commits
   * advanced, so the next operation reads it back from LMDB. `release` takes back a
   * commit's encoded nodes once LMDB is done with them (written, or the commit lost), so
   * the codec can reuse their memory; it is called once per node.
   */
  constructor(
    writer: CommitWriter,
    readers: readonly NodeReader[],
    reload: () => void,
    release: (bytes: Uint8Array) => void = () => {},
  ) {
    this.writer = writer;
    this.#readers = readers;
    this.#reload = reload;
    this.#release = release;
    this.#last = writer.pipelineMark();
    this.#durableMark = this.#last;
    this.#marks = this.#last ?? 0;
  }

  /** Commits added and not yet told their outcome. */
  get unsettled(): number {
    return this.#unsettled;
  }

  /** True while some commit added is not yet told it is durable or lost. */
  get busy(): boolean {
    return this.#unsettled > 0;
  }

  /** Resolves once every commit added so far is durable or lost, and told. */
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
   * Hands a built commit to LMDB; resolves once it is durable, rejects with
   * `internal_error` when it, or a commit it was built on, was lost.
   */
  add(writes: CommitWrites, nodes: NewNodes): Promise<void> {
    for (const [, node] of nodes) this.pending.set(node.hash, node);
    const after = this.#last;
    const mark = ++this.#marks;
    this.#last = mark;
    this.#unsettled++;
    return new Promise<void>((resolve, reject) => {
      const commit: InFlight = { nodes, writes, after, mark, run: this.#run, resolve, reject };
      let written: Promise<boolean>;
      try {
        written = this.writer.writeCommitsAfter([writes], after, mark);
      } catch (error) {
        written = Promise.reject(error);
      }
      written.then(
        (done) =>
          done ? this.#durable(commit) : this.#lost(commit, "a commit before it was lost"),
        (error: unknown) =>
          this.#lost(commit, error instanceof Error ? error.message : String(error)),
      );
    });
  }

  /** Writes one commit now, in a synchronous transaction; the pipeline must be idle. */
  writeNow(writes: CommitWrites, nodes: NewNodes): void {
    this.assertIdle();
    try {
      this.writer.writeCommits([writes]);
    } finally {
      // Written, or the transaction aborted: LMDB holds none of these bytes either way.
      this.#releaseNodes(writes);
    }
    // New nodes are the likeliest to be read next; keep them decoded.
    for (const [shard, node] of nodes) this.#readers[shard]!.cache.set(node);
  }

  #releaseNodes(writes: CommitWrites): void {
    for (const [, bytes] of writes.nodes) this.#release(bytes);
  }

  #durable(commit: InFlight): void {
    this.#releaseNodes(commit.writes);
    if (commit.run === this.#run) this.#durableMark = commit.mark;
    for (const [shard, node] of commit.nodes) {
      this.#readers[shard]!.cache.set(node);
      this.pending.delete(node.hash);
    }
    this.#tell(commit.resolve);
  }

  #lost(commit: InFlight, why: string): void {
    // Settled by LMDB (failed or skipped) or refused before it: no write will read them.
    this.#releaseNodes(commit.writes);
    if (commit.run === this.#run) {
      // The first loss of this run: every commit added after it is built on it and will
      // be skipped by LMDB. Later commits start a new run from the last durable mark.
      this.#run++;
      this.#last = this.#durableMark;
      this.pending.clear();
      this.#reload();
    }
    const reason = storeError(
      "internal_error",
      `a commit could not be written, nor any commit in flight after it: ${why}`,
    );
    this.#tell(() => commit.reject(reason));
  }

  /**
   * Settles a commit on the next turn of the event loop, in order (setImmediate is FIFO,
   * and LMDB's outcomes arrive in commit order), then wakes `idle()` waiters if nothing is
   * in flight. Told at once, callers would build their next commits inside lmdb-js's
   * completion callback; lmdb-js starts queued writes from that callback's return and from
   * setImmediate, so told later they build while the next transaction flushes (measured:
   * told at once, the flush waited for them).
   */
  #tell(settle: () => void): void {
    setImmediate(() => {
      this.#unsettled--;
      settle();
      if (!this.busy) this.#wakeIdle();
    });
  }

  #wakeIdle(): void {
    const waiters = this.#idleWaiters.splice(0);
    for (const wake of waiters) wake();
  }
}
