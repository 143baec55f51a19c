/**
 * Callers waiting for runs to end: `POST /workflows/describe` with `wait_ms` holds its
 * answer until the run's end is durable (the engine's `onRunEnded`) or the wait runs out,
 * the long poll Temporal clients use to await a result, so a client never polls describe in
 * a loop. The table is bounded: when `max` callers already wait, a new one is answered at
 * once (a describe without waiting) rather than queued or refused.
 */

/** The longest a describe may wait for a run to end (`wait_ms`). */
export const DESCRIBE_WAIT_MAX_MS = 60_000;

import type { RunState } from "../engine/state.ts";

interface Waiter {
  readonly done: (end: RunState | undefined) => void;
  readonly timer: NodeJS.Timeout;
}

export class RunEnds {
  readonly #max: number;
  readonly #waiters = new Map<string, Set<Waiter>>();
  #count = 0;

  constructor(max: number) {
    this.#max = max;
  }

  /** How many callers wait now. */
  get waiting(): number {
    return this.#count;
  }

  /**
   * Resolves once `ended(runId)` is called or after `ms`, whichever is first; resolves at
   * once when the table is full. The caller must have checked, in the same turn, that the
   * run is still live in the engine, so its end cannot slip between the check and the wait.
   * It resolves with the run's state at its durable end, or undefined when it did not see
   * the end (the wait ran out, the table was full, the server is closing).
   */
  wait(runId: string, ms: number): Promise<RunState | undefined> {
    if (this.#count >= this.#max) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      let set = this.#waiters.get(runId);
      if (set === undefined) {
        set = new Set();
        this.#waiters.set(runId, set);
      }
      const waiters = set;
      const waiter: Waiter = {
        done: resolve,
        timer: setTimeout(() => this.#leave(runId, waiters, waiter), ms),
      };
      waiters.add(waiter);
      this.#count++;
    });
  }

  /** The run's end is durable: every caller waiting for it is answered, with `end`. */
  ended(runId: string, end?: RunState): void {
    const waiters = this.#waiters.get(runId);
    if (waiters === undefined) return;
    this.#waiters.delete(runId);
    for (const waiter of waiters) {
      clearTimeout(waiter.timer);
      this.#count--;
      waiter.done(end);
    }
  }

  /** Answers every waiting caller now (the server is closing). */
  close(): void {
    for (const runId of [...this.#waiters.keys()]) this.ended(runId);
  }

  #leave(runId: string, waiters: Set<Waiter>, waiter: Waiter): void {
    if (!waiters.delete(waiter)) return;
    this.#count--;
    if (waiters.size === 0) this.#waiters.delete(runId);
    waiter.done(undefined);
  }
}
