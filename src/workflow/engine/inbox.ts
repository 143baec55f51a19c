/**
 * A run's inbox: how inputs (worker results, signals, timers, the engine's own events) reach
 * a run. An input lands in the run's inbox, the run is marked dirty, and one tick is
 * scheduled for every dirty run together (group-commit.ts processes it). This module is the
 * only way in, so the roles that produce inputs (attempts.ts, run-tree.ts, recovery.ts)
 * depend on the inbox, never on the commit pipeline that drains it.
 */

import type { EngineCore } from "./core.ts";
import { stoppedError } from "./core.ts";
import type { HistoryEvent } from "./history.ts";
import type { Run } from "./run.ts";

/** For the engine's own events (timers, timeouts): nobody waits, so a refusal is dropped. */
export function enqueueInternal(core: EngineCore, run: Run, event: HistoryEvent): void {
  enqueue(core, run, event).catch(() => {});
}
export function enqueue(core: EngineCore, run: Run, event: HistoryEvent): Promise<void> {
  if (core.stopped) return Promise.reject(stoppedError());
  return new Promise((done, fail) => {
    run.inbox.push({ event, done, fail });
    markDirty(core, run);
  });
}
export function markDirty(core: EngineCore, run: Run): void {
  core.dirty.add(run);
  if (core.scheduled || core.ticking || core.stopped) return;
  core.scheduled = true;
  setImmediate(core.tickNow);
}
