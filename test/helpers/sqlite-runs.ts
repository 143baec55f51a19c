// The server's own SQLite run store, opened on a fresh database in `dir`, for engine tests:
// engine commits go through the real persistence layer. `history` reads a run's events
// (empty when the run does not exist).

import { join } from "node:path";
import type { HistoryEvent } from "../../src/workflow/engine/history.ts";
import { SqliteWorkflowStore } from "../../src/workflow/persistence/sqlite/store.ts";
import type { RunStore } from "../../src/workflow/persistence/workflows.ts";

export interface TestRunStore extends Omit<RunStore, "history"> {
  history(runId: string): Promise<HistoryEvent[]>;
  close(): Promise<void>;
}

export function openRuns(dir: string): TestRunStore {
  const store = SqliteWorkflowStore.open(join(dir, "skein.db"));
  const runs = store.workflows.runs;
  return {
    commit: (batch) => runs.commit(batch),
    loadRunning: () => runs.loadRunning(),
    loadOutbox: () => runs.loadOutbox(),
    byWorkflowId: (namespace, workflowId) => runs.byWorkflowId(namespace, workflowId),
    list: (query) => runs.list(query),
    history: async (runId) => (await runs.history(runId)) ?? [],
    close: () => store.close(),
  };
}
