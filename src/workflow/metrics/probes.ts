/**
 * Where the scrape-time gauges read their levels on a running node: the engine (runs held,
 * outbox lanes and ceiling) and the matcher (backlog, attempts held, connected sessions).
 * Each read walks in-memory state once per scrape; none touches storage.
 */

import type { Engine } from "../engine/engine.ts";
import type { Matcher } from "../matching/matcher.ts";
import type { WorkflowProbes } from "./registry.ts";

export function nodeProbes(engine: Engine, matcher: Matcher): WorkflowProbes {
  return {
    runsHeld: () => engine.statusCounts(),
    outboxLanes: () => engine.outboxLanes(),
    outboxCeiling: () => engine.outboxCeiling,
    matcherBacklog: () => matcher.stats().waiting,
    matcherHolding: () => matcher.stats().holding,
    workerKinds: () => matcher.workers().map((w) => w.kind),
  };
}
