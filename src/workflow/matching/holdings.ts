/**
 * The attempts the matcher holds, by attempt key, each waiting (no session, with its offer),
 * assigned (a session) or detached (no session, no offer: its worker's stream ended and may
 * come back); indexed by run so that a run's live attempts are read without a scan.
 */

import type { TaskOffer } from "../engine/dispatcher.ts";
import type { Session } from "./session.ts";
import type { TaskQueue } from "./task-queue.ts";

/**
 * An attempt the matcher holds: waiting (no session, with its offer), assigned (a session),
 * or detached (no session, no offer: its worker's stream ended and may come back).
 */
export interface Holding {
  /** The attempt's run (its key's first part, kept so the run index needs no slicing). */
  readonly runId: string;
  readonly session: Session | undefined;
  readonly offer: TaskOffer | undefined;
  /** The queue it was offered in or re-attached from (possibly pruned since: compare names). */
  readonly queue: TaskQueue;
  /** The attempt's action, for its capabilities. */
  readonly action: string;
}

/**
 * The attempts held, by attempt key, and indexed by run: listing a run's live attempts
 * (the attempts read, a cancellation) reads that run's keys, not every attempt held.
 */
export class Holdings {
  readonly #all = new Map<string, Holding>();
  readonly #byRun = new Map<string, Set<string>>();

  get size(): number {
    return this.#all.size;
  }

  get(key: string): Holding | undefined {
    return this.#all.get(key);
  }

  has(key: string): boolean {
    return this.#all.has(key);
  }

  set(key: string, holding: Holding): void {
    const prior = this.#all.get(key);
    this.#all.set(key, holding);
    if (prior !== undefined) return;
    const run = holding.runId;
    let keys = this.#byRun.get(run);
    if (keys === undefined) {
      keys = new Set();
      this.#byRun.set(run, keys);
    }
    keys.add(key);
  }

  delete(key: string): boolean {
    const holding = this.#all.get(key);
    if (holding === undefined) return false;
    this.#all.delete(key);
    const keys = this.#byRun.get(holding.runId);
    keys?.delete(key);
    if (keys?.size === 0) this.#byRun.delete(holding.runId);
    return true;
  }

  /** The keys held for one run. */
  ofRun(runId: string): Iterable<string> {
    return this.#byRun.get(runId) ?? [];
  }
}
