// The server's own SQLite run store, opened on a fresh database in `dir` (or at `file`), for
// engine tests: engine commits go through the real persistence layer. `history` reads a run's
// events (empty when the run does not exist), `outbox` every outbox row with its latest
// state (done ones included, read straight from the table), `runs` every run of a namespace.

import { join } from "node:path";
import type { HistoryEvent } from "../../src/workflow/engine/history.ts";
import type { OutboxRow } from "../../src/workflow/engine/store.ts";
import { SqlDefinitionStore } from "../../src/workflow/persistence/sql/definitions.ts";
import { SqlRunStore } from "../../src/workflow/persistence/sql/runs.ts";
import { openDatabase } from "../../src/workflow/persistence/sqlite/database.ts";
import { SqliteDatabase } from "../../src/workflow/persistence/sqlite/driver.ts";
import { migrate } from "../../src/workflow/persistence/sqlite/migrations.ts";
import type {
  DefinitionStore,
  RunPosition,
  RunRecord,
  RunStore,
} from "../../src/workflow/persistence/workflows.ts";

export interface TestRunStore extends Omit<RunStore, "history"> {
  /** The definitions of the same database (a run's record names its registered definition). */
  readonly definitions: DefinitionStore;
  history(runId: string): Promise<HistoryEvent[]>;
  outbox(): Promise<OutboxRow[]>;
  runs(namespace?: string): Promise<RunRecord[]>;
  close(): Promise<void>;
}

interface OutboxTableRow {
  run_id: string;
  namespace: string;
  activity_id: number | bigint;
  attempt: number | bigint;
  state: OutboxRow["state"];
}

export function openRuns(dir: string): TestRunStore {
  return openRunsAt(join(dir, "skein.db"));
}

export function openRunsAt(file: string): TestRunStore {
  // The server's file opening and migrations, and its run store over that connection: the
  // file is locked to one connection, so the test's own reads go through the same one.
  const db = openDatabase(file);
  migrate(db, file);
  const database = new SqliteDatabase(db);
  const runs = new SqlRunStore(database);
  const allOutbox = db.prepare(
    "SELECT run_id, namespace, activity_id, attempt, state FROM workflow_outbox",
  );
  return {
    definitions: new SqlDefinitionStore(database),
    commit: (batch) => runs.commit(batch),
    loadRunning: () => runs.loadRunning(),
    loadOutbox: () => runs.loadOutbox(),
    byWorkflowId: (namespace, workflowId) => runs.byWorkflowId(namespace, workflowId),
    list: (query) => runs.list(query),
    history: async (runId) => (await runs.history(runId)) ?? [],
    outbox: async () =>
      (allOutbox.all() as unknown as OutboxTableRow[]).map((r) => ({
        runId: r.run_id,
        namespace: r.namespace,
        activityId: Number(r.activity_id),
        attempt: Number(r.attempt),
        state: r.state,
      })),
    runs: async (namespace = "default") => {
      const all: RunRecord[] = [];
      let after: RunPosition | undefined;
      do {
        const page = await runs.list({ namespace, status: undefined, limit: 1000, after });
        all.push(...page.runs);
        after = page.next;
      } while (after !== undefined);
      return all;
    },
    close: async () => {
      if (db.isOpen) db.close();
    },
  };
}
