/**
 * Fault injection for the commit pipeline: wraps the store's real `CommitWriter` so a test
 * can hold pipelined commits before they reach LMDB, then let them through, or fail the
 * first as a failed flush would and let the rest reach LMDB (which must skip them: they
 * are chained to the lost one). Nothing else of the store is replaced.
 */

import type { Store } from "../../../src/store/engine/index.ts";
import type { CommitWriter, CommitWrites } from "../../../src/store/lmdb/database.ts";

interface Held {
  readonly commits: readonly CommitWrites[];
  readonly after: number | null;
  readonly mark: number;
  readonly resolve: (done: boolean) => void;
  readonly reject: (error: unknown) => void;
}

export class GatedWriter implements CommitWriter {
  readonly #real: CommitWriter;
  readonly #held: Held[] = [];
  /** While true, pipelined writes wait instead of reaching LMDB. */
  holding = false;
  /** Pipelined writes handed to this writer (held or not), in order. */
  readonly handed: (readonly CommitWrites[])[] = [];
  /** Outcomes from the real writer: true written, false skipped by LMDB. */
  readonly outcomes: boolean[] = [];

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

  pipelineMark(): number | null {
    return this.#real.pipelineMark();
  }

  writeCommitsAfter(
    commits: readonly CommitWrites[],
    after: number | null,
    mark: number,
  ): Promise<boolean> {
    this.handed.push(commits);
    if (!this.holding) return this.#write(commits, after, mark);
    return new Promise((resolve, reject) =>
      this.#held.push({ commits, after, mark, resolve, reject }),
    );
  }

  /** Writes the held commits for real, in order (and stops holding). */
  release(): void {
    this.holding = false;
    for (const held of this.#held.splice(0)) {
      this.#write(held.commits, held.after, held.mark).then(held.resolve, held.reject);
    }
  }

  /** Fails the first held write without writing it; the others go to LMDB for real. */
  fail(): void {
    const first = this.#held.shift();
    first?.reject(new Error("injected flush failure"));
    this.release();
  }

  /**
   * Fails the first held write, but reports it only after LMDB has answered the others (it
   * skips them): the order lmdb-js itself can report in, a failed transaction's reason
   * arriving through a second promise after the skips of the commits chained to it.
   */
  async failLate(): Promise<void> {
    const first = this.#held.shift();
    const rest = this.#held.splice(0);
    this.holding = false;
    await Promise.all(
      rest.map((held) =>
        this.#write(held.commits, held.after, held.mark).then(held.resolve, held.reject),
      ),
    );
    await new Promise((resolve) => setImmediate(resolve));
    first?.reject(new Error("injected flush failure, reported late"));
  }

  #write(commits: readonly CommitWrites[], after: number | null, mark: number) {
    return this.#real.writeCommitsAfter(commits, after, mark).then((done) => {
      this.outcomes.push(done);
      return done;
    });
  }
}
