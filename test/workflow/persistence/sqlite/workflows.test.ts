// The SQLite workflow persistence beyond the shared contract (which store.test.ts runs
// through workflowStoreConformance): history positions across a reopen.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { SqliteWorkflowStore } from "../../../../src/workflow/persistence/sqlite/store.ts";
import { started, V1 } from "../workflows-conformance.ts";

const dirs: string[] = [];
const stores: SqliteWorkflowStore[] = [];
async function open(file?: string): Promise<SqliteWorkflowStore> {
  let path = file;
  if (path === undefined) {
    const dir = await mkdtemp(join(tmpdir(), "skein-sqlite-wf-"));
    dirs.push(dir);
    path = join(dir, "skein.db");
  }
  const store = SqliteWorkflowStore.open(path);
  stores.push(store);
  return store;
}
after(async () => {
  for (const s of stores) await s.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("SQLite runs", () => {
  test("history positions continue across a reopen (the seq is read back)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "skein-sqlite-wf-"));
    dirs.push(dir);
    const file = join(dir, "skein.db");
    const id = { runId: "r", workflowId: "w", namespace: "n", definitionVersion: V1 };
    const a = await open(file);
    await a.workflows.runs.commit([{ ...id, events: [started(1, "w")], status: "Running" }]);
    await a.close();
    const b = await open(file);
    // No loadRunning first: the commit reads the run's position from its row.
    await b.workflows.runs.commit([
      {
        ...id,
        events: [{ type: "TimerStarted", at: 2, timer_id: "t", fire_at: 3 }],
        status: "Running",
      },
    ]);
    assert.deepEqual(
      (await b.workflows.runs.history("r"))?.map((e) => e.type),
      ["RunStarted", "TimerStarted"],
    );
  });
});
