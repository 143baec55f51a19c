/**
 * Where the scrape-time gauges read their levels on a running node: the engine (runs held,
 * outbox lanes and ceiling) and the matcher (backlog, attempts held, connected sessions).
 * Each read walks in-memory state once per scrape; none touches storage.
 */

import type { Engine } from "../engine/engine.ts";
import type { Matcher } from "../matching/matcher.ts";
import type { WorkflowProbes } from "./registry.ts";

/** What the gauges read of a node's engine (one engine, or a cluster node's shard engines). */
export type EngineGauges = Pick<Engine, "statusCounts" | "outboxLanes" | "outboxCeiling">;

export function nodeProbes(engine: EngineGauges, matcher: Matcher): WorkflowProbes {
  return {
    runsHeld: () => engine.statusCounts(),
    outboxLanes: () => engine.outboxLanes(),
    outboxCeiling: () => engine.outboxCeiling,
    matcherBacklog: () => matcher.stats().waiting,
    matcherHolding: () => matcher.stats().holding,
    workerKinds: () => matcher.workers().map((w) => w.kind),
  };
}
