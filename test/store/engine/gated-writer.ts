/**
 * Fault injection for the commit pipeline: wraps the store's real `CommitWriter` so a test
 * can hold batches before they reach LMDB, then let them through or fail them. Nothing
 * else of the store is replaced.
 */

import type { Store } from "../../../src/store/engine/index.ts";
import type { CommitWriter, CommitWrites } from "../../../src/store/lmdb/database.ts";

interface Held {
  readonly commits: readonly CommitWrites[];
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export class GatedWriter implements CommitWriter {
  readonly #real: CommitWriter;
  readonly #held: Held[] = [];
  /** While true, batches wait in `held` instead of being written. */
  holding = false;
  /** Batches handed to this writer (held or not), in order: the commits of each. */
  readonly batches: (readonly CommitWrites[])[] = [];

  constructor(real: CommitWriter) {
    this.#real = real;
  }

  /** Wraps the store's writer; returns the wrapper. */
  static install(store: Store): GatedWriter {
    const gated = new GatedWriter(store.ctx.pipeline.writer);
    store.ctx.pipeline.writer = gated;
    return gated;
  }

  get held(): number {
    return this.#held.length;
  }

  writeCommits(commits: readonly CommitWrites[]): void {
    this.#real.writeCommits(commits);
  }

  writeCommitsDurably(commits: readonly CommitWrites[]): Promise<void> {
    this.batches.push(commits);
    if (!this.holding) return this.#real.writeCommitsDurably(commits);
    return new Promise((resolve, reject) => this.#held.push({ commits, resolve, reject }));
  }

  /** Writes the held batches for real (and stops holding). */
  release(): void {
    this.holding = false;
    for (const held of this.#held.splice(0)) {
      this.#real.writeCommitsDurably(held.commits).then(held.resolve, held.reject);
    }
  }

  /** Fails the held batches without writing them, as a failed flush would. */
  fail(): void {
    this.holding = false;
    for (const held of this.#held.splice(0)) held.reject(new Error("injected flush failure"));
  }
}
