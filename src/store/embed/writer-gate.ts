/**
 * Foreground admission for embedding commits (the spec's `embed_writer_wait_ms`). A page
 * of the walk is one embedding commit: from reading a data branch's page to committing its
 * vectors, the walk holds that branch. A foreground commit to a held branch (document.put,
 * document.delete, document.append_prune) waits for the page's commit, at most
 * `embed_writer_wait_ms` in all, and is then refused `embed_admission_wait_exceeded`. So a
 * steady stream of writes cannot keep an embedded branch's vectors ever further behind its
 * data: writers yield to one page at a time, and a page that takes longer than the wait
 * turns into a named refusal to the writer, never an unbounded wait. Other branches and
 * collections are not held.
 */

import { storeError } from "../errors.ts";

interface Hold {
  readonly released: Promise<void>;
  readonly release: () => void;
}

export class WriterGate {
  readonly #waitMs: number;
  readonly #held = new Map<string, Hold>();

  constructor(waitMs: number) {
    this.#waitMs = waitMs;
  }

  /** Holds a data branch for one page; the returned function releases it. */
  hold(collection: string, branch: string): () => void {
    const id = branchId(collection, branch);
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const hold: Hold = { released, release };
    this.#held.set(id, hold);
    return () => {
      if (this.#held.get(id) === hold) this.#held.delete(id);
      hold.release();
    };
  }

  /** The deadline of a foreground commit's wait that starts now. */
  deadline(): number {
    return performance.now() + this.#waitMs;
  }

  /**
   * Undefined when the branch is free (the commit goes ahead now); else a promise that
   * resolves when the page holding it is committed, or rejects with
   * `embed_admission_wait_exceeded` at `deadline` (from `deadline()` at the first wait: the
   * bound is for the whole wait, over several pages).
   */
  wait(collection: string, branch: string, deadline: number): Promise<void> | undefined {
    const hold = this.#held.get(branchId(collection, branch));
    if (hold === undefined) return undefined;
    const left = deadline - performance.now();
    if (left <= 0) return Promise.reject(this.#exceeded(collection, branch));
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(this.#exceeded(collection, branch)), left);
      void hold.released.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  #exceeded(collection: string, branch: string) {
    return storeError(
      "embed_admission_wait_exceeded",
      `${collection}/${branch} stayed held by an embedding commit for embed_writer_wait_ms (${this.#waitMs} ms)`,
    );
  }
}

function branchId(collection: string, branch: string): string {
  return `${collection}\u0000${branch}`;
}

/** The branch a foreground commit's raw arguments name (its decoder refuses anything else). */
export function committedBranch(args: unknown): { collection: string; branch: string } | undefined {
  if (args === null || typeof args !== "object") return undefined;
  const { collection, branch } = args as { collection?: unknown; branch?: unknown };
  if (typeof collection !== "string") return undefined;
  if (branch !== undefined && typeof branch !== "string") return undefined;
  return { collection, branch: branch ?? "main" };
}
