/**
 * Activity latency and throughput: the events the matcher reports, wrapped so each result is
 * observed (`skein_activity_seconds{outcome}`: its count is the throughput). The matcher
 * reports when it was offered the attempt with the result (its holding keeps the time), so
 * no stamp is kept here per attempt; an attempt the matcher did not offer (re-attached after
 * a restart) goes unmeasured.
 */

import type { MatcherEvents } from "../engine/dispatcher.ts";
import { aroundEvents } from "./around.ts";
import type { WorkflowMetrics } from "./registry.ts";

export interface MeteredActivities {
  events(inner: MatcherEvents): MatcherEvents;
}

export function meteredActivities(metrics: WorkflowMetrics): MeteredActivities {
  return {
    events: (inner) =>
      aroundEvents(inner, (_ref, outcome, _code, offeredAt) => {
        if (offeredAt === undefined || Number.isNaN(offeredAt)) return;
        metrics.activities.observe(outcome, (performance.now() - offeredAt) / 1000);
      }),
  };
}
