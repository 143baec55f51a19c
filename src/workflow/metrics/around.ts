/**
 * The observation points metrics and tracing share: the dispatcher with hooks around
 * `offer` and `release`, and the matcher's events with a hook on every result. Every other
 * member passes through unchanged, so a wrapper can never change what the engine or the
 * matcher does, only watch it.
 */

import type { AttemptRef } from "../../protocol/attempt.ts";
import type { Dispatcher, MatcherEvents, TaskOffer } from "../engine/dispatcher.ts";

export interface DispatchHooks {
  /** After the inner offer returned (not called when it threw). */
  offered(task: TaskOffer): void;
  /** Before the inner release. */
  released(ref: AttemptRef, reason: string): void;
}

export function aroundDispatcher(inner: Dispatcher, hooks: DispatchHooks): Dispatcher {
  return {
    offer(task) {
      const outcome = inner.offer(task);
      hooks.offered(task);
      return outcome;
    },
    release(ref, reason) {
      hooks.released(ref, reason);
      inner.release(ref, reason);
    },
    ...(inner.flush === undefined ? {} : { flush: () => inner.flush!() }),
    ...(inner.liveAttempts === undefined
      ? {}
      : { liveAttempts: (runId: string) => inner.liveAttempts!(runId) }),
    ...(inner.withdraw === undefined
      ? {}
      : {
          withdraw(ref: AttemptRef) {
            if (!inner.withdraw!(ref)) return false;
            hooks.released(ref, "withdrawn");
            return true;
          },
        }),
  };
}

/**
 * A result's outcome, the failure's code when it failed, and when the matcher was offered
 * the attempt (see `MatcherEvents.completed`).
 */
export type Settled = (
  ref: AttemptRef,
  outcome: "completed" | "failed",
  code: string | undefined,
  offeredAt: number | undefined,
) => void;

export function aroundEvents(inner: MatcherEvents, settled: Settled): MatcherEvents {
  return {
    ...inner,
    completed(ref, outputJson, ctx, receipt, offeredAt) {
      settled(ref, "completed", undefined, offeredAt);
      inner.completed(ref, outputJson, ctx, receipt, offeredAt);
    },
    failed(ref, failure, ctx, receipt, offeredAt) {
      settled(ref, "failed", failure.code, offeredAt);
      inner.failed(ref, failure, ctx, receipt, offeredAt);
    },
  };
}
