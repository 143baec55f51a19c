/**
 * Activity latency and throughput: the dispatcher the engine talks to and the events the
 * matcher reports, each wrapped so an attempt's offer is stamped and its result observed
 * (`skein_activity_seconds{outcome}`: its count is the throughput). Stamps live only while an
 * attempt is current (a release or a result forgets them), and their number is capped, so
 * a stuck run can never grow the map without bound: past the cap attempts go unmeasured.
 */

import { type AttemptRef, attemptKey } from "../../protocol/attempt.ts";
import type { Dispatcher, MatcherEvents } from "../engine/dispatcher.ts";
import { aroundDispatcher, aroundEvents } from "./around.ts";
import type { WorkflowMetrics } from "./registry.ts";

/** Offer stamps kept at most (one per current attempt). */
export const MAX_STAMPED_ATTEMPTS = 1_000_000;

export interface MeteredActivities {
  dispatcher(inner: Dispatcher): Dispatcher;
  events(inner: MatcherEvents): MatcherEvents;
}

export function meteredActivities(metrics: WorkflowMetrics): MeteredActivities {
  const offered = new Map<string, number>();
  const settle = (ref: AttemptRef, outcome: "completed" | "failed") => {
    const key = attemptKey(ref);
    const at = offered.get(key);
    if (at === undefined) return;
    offered.delete(key);
    metrics.activities.observe({ outcome }, (performance.now() - at) / 1000);
  };
  return {
    dispatcher: (inner) =>
      aroundDispatcher(inner, {
        offered(task) {
          if (offered.size < MAX_STAMPED_ATTEMPTS)
            offered.set(attemptKey(task.ref), performance.now());
        },
        released: (ref) => offered.delete(attemptKey(ref)),
      }),
    events: (inner) => aroundEvents(inner, settle),
  };
}
