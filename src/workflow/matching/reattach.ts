/**
 * The re-attach rules of a hello: a worker that reconnects lists the attempts it still holds,
 * and they are re-attached to its new session, but only attempts of the session's own
 * namespace and task queue (one held for another refuses the hello, `reattach_refused`), at
 * most as many as its concurrency, and only attempts the matcher holds or the engine says are
 * current (`owner`): a hello cannot make the matcher keep attempts nobody offered.
 */

import type { Logger } from "../../common/log.ts";
import { type AttemptRef, attemptKey } from "../../protocol/attempt.ts";
import type { DecodedHello } from "../../protocol/worker-stream/decode.ts";
import type { MatcherEvents } from "../engine/dispatcher.ts";
import { streamRefusal } from "../errors.ts";
import { Holding, type Holdings } from "./holdings.ts";
import type { Session } from "./session.ts";
import type { SettledMemory } from "./settled.ts";
import { type TaskQueue, withdraw } from "./task-queue.ts";

/** What the re-attach rules read and change of the matcher. */
export interface ReattachState {
  readonly holding: Holdings;
  readonly settled: SettledMemory;
  readonly owner: MatcherEvents["owner"];
  readonly log: Logger;
}

/**
 * Refuses a hello that lists an attempt of another namespace or task queue: one the
 * matcher holds for another queue, or one the engine places elsewhere.
 */
export function checkReattach(state: ReattachState, hello: DecodedHello): void {
  hello.running.forEach(({ ref }, i) => {
    const key = attemptKey(ref);
    if (state.settled.has(key)) return;
    const prior = state.holding.get(key);
    const owner = prior === undefined ? state.owner?.(ref) : undefined;
    const place =
      prior !== undefined
        ? { namespace: prior.queue.namespace, taskQueue: prior.queue.name }
        : owner;
    if (place === undefined) return;
    if (place.namespace === hello.namespace && place.taskQueue === hello.task_queue) return;
    throw streamRefusal(
      "reattach_refused",
      `hello.running[${i}]: attempt ${key} is not an attempt of namespace ${JSON.stringify(hello.namespace)}, task queue ${JSON.stringify(hello.task_queue)}`,
    );
  });
}

/**
 * Re-attach: the attempts this process still holds (checked by checkReattach to be of its
 * queue) count against its slots, at most its concurrency, and their results are accepted
 * from this session. Settled ones need nothing (a resent result is acknowledged); one the
 * matcher does not hold is taken only when the engine says it is current (or, without an
 * engine, on the hello's word).
 */
export function reattach(state: ReattachState, session: Session, queue: TaskQueue): AttemptRef[] {
  const attached: AttemptRef[] = [];
  for (const { ref, action } of session.hello.running) {
    if (attached.length >= session.hello.concurrency) {
      state.log.warn(
        { session: session.id, listed: session.hello.running.length },
        "hello lists more attempts than its concurrency; the rest are not re-attached",
      );
      break;
    }
    const key = attemptKey(ref);
    if (state.settled.has(key)) continue;
    const prior = state.holding.get(key);
    if (prior?.session === session) continue;
    // Assigned to another live worker since: that one's result counts, not this one's.
    if (prior?.session !== undefined && !prior.session.closed) continue;
    let held = action;
    if (prior !== undefined) {
      held = prior.action;
      // Offered again (after a server restart) and still waiting: the worker that already
      // runs it keeps it, and the waiting copy is withdrawn.
      if (prior.offer !== undefined) withdraw(prior.queue, prior.offer);
    } else if (state.owner !== undefined) {
      const owner = state.owner(ref);
      if (owner === undefined) continue;
      held = owner.action;
    }
    state.holding.set(
      key,
      new Holding(ref, session, prior?.offer, queue, held, prior?.offeredAt ?? Number.NaN),
    );
    attached.push(ref);
  }
  return attached;
}
