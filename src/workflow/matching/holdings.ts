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
    if (!this.#all.has(key)) {
      const run = runOfKey(key);
      let keys = this.#byRun.get(run);
      if (keys === undefined) {
        keys = new Set();
        this.#byRun.set(run, keys);
      }
      keys.add(key);
    }
    this.#all.set(key, holding);
  }

  delete(key: string): boolean {
    if (!this.#all.delete(key)) return false;
    const run = runOfKey(key);
    const keys = this.#byRun.get(run);
    keys?.delete(key);
    if (keys?.size === 0) this.#byRun.delete(run);
    return true;
  }

  /** The keys held for one run. */
  ofRun(runId: string): Iterable<string> {
    return this.#byRun.get(runId) ?? [];
  }
}

/** `run_id/activity_id/attempt` → `run_id`. */
function runOfKey(key: string): string {
  return key.slice(0, key.indexOf("/"));
}
