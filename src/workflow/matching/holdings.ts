/**
 * The attempts the matcher holds, one record each, found by attempt key, each waiting (no
 * session, with its offer), assigned (a session) or detached (no session, no offer: its
 * worker's stream ended and may come back); indexed by run so that a run's live attempts are
 * read without a scan.
 *
 * One record carries what five keyed collections held before (the holding, the session's
 * assigned set, the released set and the run index's per-run set): a settled step takes one
 * key out of one map, and the run index is a list threaded through the records, so a run
 * with one attempt at a time builds no set per step. Long-lived keyed tables that take and
 * drop a key per step are rebuilt in V8's old generation as they churn (docs/engine.md,
 * "Allocations per step"); the fewer of them, the less the collector marks.
 */

import type { AttemptRef } from "../../protocol/attempt.ts";
import type { TaskOffer } from "../engine/dispatcher.ts";
import { YoungMap } from "../engine/young-map.ts";
import type { Session } from "./session.ts";
import type { TaskQueue } from "./task-queue.ts";

/**
 * An attempt the matcher holds: waiting (no session, with its offer), assigned (a session),
 * or detached (no session, no offer: its worker's stream ended and may come back). A record
 * is replaced, never changed, when its state moves, but for `released` and the run index's
 * links, which are the holdings' own.
 */
export class Holding {
  readonly ref: AttemptRef;
  readonly session: Session | undefined;
  readonly offer: TaskOffer | undefined;
  /** The queue it was offered in or re-attached from (possibly pruned since: compare names). */
  readonly queue: TaskQueue;
  /** The attempt's action, for its capabilities. */
  readonly action: string;
  /**
   * When the matcher was offered it (`performance.now()`), kept across a re-attach; NaN for
   * an attempt it never offered (re-attached after a server restart).
   */
  readonly offeredAt: number;
  /**
   * The engine gave it up while a live worker still runs it: that worker's late result is
   * acknowledged and not reported.
   */
  released = false;
  /** The run index's list (Holdings' own). */
  prevInRun: Holding | undefined = undefined;
  nextInRun: Holding | undefined = undefined;

  constructor(
    ref: AttemptRef,
    session: Session | undefined,
    offer: TaskOffer | undefined,
    queue: TaskQueue,
    action: string,
    offeredAt: number,
  ) {
    this.ref = ref;
    this.session = session;
    this.offer = offer;
    this.queue = queue;
    this.action = action;
    this.offeredAt = offeredAt;
  }

  /** The attempt's run. */
  get runId(): string {
    return this.ref.run_id;
  }
}

/**
 * The attempts held, by attempt key, and indexed by run: listing a run's live attempts
 * (the attempts read, a cancellation) walks that run's records, not every attempt held.
 * Each session's count of attempts assigned to it (`busy`) follows the records.
 */
export class Holdings {
  readonly #all = new YoungMap<string, Holding>();
  /** The first record of each run with any (the rest follow `nextInRun`). */
  readonly #byRun = new YoungMap<string, Holding>();

  get size(): number {
    return this.#all.size;
  }

  get(key: string): Holding | undefined {
    return this.#all.get(key);
  }

  has(key: string): boolean {
    return this.#all.has(key);
  }

  /** Holds `holding` under `key`, in place of any record held there. */
  set(key: string, holding: Holding): void {
    const prior = this.#all.get(key);
    this.#all.set(key, holding);
    if (holding.session !== undefined) holding.session.busy++;
    if (prior === undefined) {
      const head = this.#byRun.get(holding.runId);
      holding.nextInRun = head;
      if (head !== undefined) head.prevInRun = holding;
      this.#byRun.set(holding.runId, holding);
      return;
    }
    if (prior.session !== undefined) prior.session.busy--;
    // The new record takes the prior one's place in its run's list.
    holding.prevInRun = prior.prevInRun;
    holding.nextInRun = prior.nextInRun;
    if (prior.prevInRun === undefined) this.#byRun.set(holding.runId, holding);
    else prior.prevInRun.nextInRun = holding;
    if (prior.nextInRun !== undefined) prior.nextInRun.prevInRun = holding;
    prior.prevInRun = undefined;
    prior.nextInRun = undefined;
  }

  delete(key: string): boolean {
    const holding = this.#all.get(key);
    if (holding === undefined) return false;
    this.#all.delete(key);
    if (holding.session !== undefined) holding.session.busy--;
    const { prevInRun: prev, nextInRun: next } = holding;
    if (prev === undefined) {
      if (next === undefined) this.#byRun.delete(holding.runId);
      else this.#byRun.set(holding.runId, next);
    } else prev.nextInRun = next;
    if (next !== undefined) next.prevInRun = prev;
    holding.prevInRun = undefined;
    holding.nextInRun = undefined;
    return true;
  }

  /** The records held for one run. */
  *ofRun(runId: string): Generator<Holding> {
    for (let h = this.#byRun.get(runId); h !== undefined; h = h.nextInRun) yield h;
  }

  /** The records assigned to `session`, with their keys (a copy: the caller may change them). */
  ofSession(session: Session): [string, Holding][] {
    const out: [string, Holding][] = [];
    for (const entry of this.#all) if (entry[1].session === session) out.push(entry);
    return out;
  }
}
