/**
 * The engine store with commit metrics around it: each group commit's duration, its size in
 * runs and in events, and its failures. It wraps the `EngineStore` interface (the engine and
 * the persistence layer never know), and adds one clock read and one loop over the batch's
 * appends per commit, nothing per event.
 */

import type { EngineStore } from "../engine/store.ts";
import type { WorkflowMetrics } from "./registry.ts";

export function meteredEngineStore(store: EngineStore, metrics: WorkflowMetrics): EngineStore {
  return {
    async commit(batch) {
      const started = performance.now();
      try {
        await store.commit(batch);
      } catch (error) {
        metrics.commitFailures.inc();
        throw error;
      }
      metrics.commitSeconds.observe((performance.now() - started) / 1000);
      let events = 0;
      for (let i = 0; i < batch.length; i++) events += batch[i]!.events.length;
      metrics.commitRuns.observe(batch.length);
      metrics.commitEvents.observe(events);
    },
    loadRunning: () => store.loadRunning(),
    loadOutbox: () => store.loadOutbox(),
  } satisfies EngineStore;
}
