// The SQLite workflow persistence: the EngineStore contract (the suite every engine backend
// runs), definitions by content hash, and the run reads the HTTP API answers from.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { HistoryEvent } from "../../../../src/workflow/engine/history.ts";
import { SqliteWorkflowStore } from "../../../../src/workflow/persistence/sqlite/store.ts";
import { engineStoreConformance } from "../../../helpers/engine-store-conformance.ts";

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

engineStoreConformance("SQLite (server persistence)", async () => (await open()).workflows.runs);

const V1 = `sha256:${"01".repeat(32)}`;
const V2 = `sha256:${"02".repeat(32)}`;

describe("SQLite definitions", () => {
  test("a version is stored once per namespace; the last registration is the latest", async () => {
    const { definitions } = (await open()).workflows;
    const base = { namespace: "a", name: "d", canonical: "{}", registeredBy: "t" };
    const first = await definitions.register({ ...base, version: V1, registeredAt: 1 });
    assert.equal(first.created, true);
    assert.equal(
      (await definitions.register({ ...base, version: V2, registeredAt: 2 })).created,
      true,
    );
    assert.equal((await definitions.latest("a", "d"))?.version, V2);
    const again = await definitions.register({ ...base, version: V1, registeredAt: 3 });
    assert.equal(again.created, false);
    assert.equal(again.record.registeredAt, 1, "the first registration's record is kept");
    assert.equal((await definitions.latest("a", "d"))?.version, V1);
    // Namespaces are separate.
    assert.equal(await definitions.get("b", V1), undefined);
    assert.equal(await definitions.latest("b", "d"), undefined);
    assert.equal((await definitions.get("a", V2))?.name, "d");
  });
});

function started(at: number, workflowId: string): HistoryEvent {
  return {
    type: "RunStarted",
    at,
    workflow_id: workflowId,
    definition_version: V1,
    input_json: "{}",
  };
}

describe("SQLite runs: records, pages and histories", () => {
  test("a run row follows its commits: status, times, output, failure", async () => {
    const { runs } = (await open()).workflows;
    const id = (runId: string) => ({
      runId,
      workflowId: `w-${runId}`,
      namespace: "n",
      definitionVersion: V1,
    });
    await runs.commit([
      { ...id("r1"), events: [started(10, "w-r1")], status: "Running" },
      { ...id("r2"), events: [started(11, "w-r2")], status: "Running" },
    ]);
    await runs.commit([
      {
        ...id("r1"),
        events: [{ type: "RunCompleted", at: 20, output_json: '{"n":1.50}' }],
        status: "Completed",
      },
      {
        ...id("r2"),
        events: [{ type: "RunFailed", at: 21, code: "boom", message: "no" }],
        status: "Failed",
      },
    ]);
    const r1 = await runs.byWorkflowId("n", "w-r1");
    assert.deepEqual(
      { status: r1?.status, startedAt: r1?.startedAt, endedAt: r1?.endedAt, out: r1?.outputJson },
      { status: "Completed", startedAt: 10, endedAt: 20, out: '{"n":1.50}' },
    );
    const r2 = await runs.byWorkflowId("n", "w-r2");
    assert.deepEqual(r2?.failure, { code: "boom", message: "no" });
    assert.equal(await runs.byWorkflowId("other", "w-r1"), undefined);
    assert.deepEqual(
      (await runs.history("r1"))?.map((e) => e.type),
      ["RunStarted", "RunCompleted"],
    );
    assert.equal(await runs.history("nope"), undefined);
  });

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

  test("list filters by status and pages with a stable cursor", async () => {
    const { runs } = (await open()).workflows;
    const batch = Array.from({ length: 7 }, (_, i) => ({
      runId: `r${i}`,
      workflowId: `w${i}`,
      namespace: "n",
      definitionVersion: V1,
      events: [started(100 + (i % 3), `w${i}`)],
      status: "Running" as const,
    }));
    await runs.commit(batch);
    await runs.commit([
      {
        ...batch[2]!,
        events: [{ type: "RunCompleted", at: 200, output_json: "1" }],
        status: "Completed",
      },
    ]);
    const seen: string[] = [];
    let after: { startedAt: number; runId: string } | undefined;
    for (let pages = 0; ; pages++) {
      assert.ok(pages < 10);
      const page = await runs.list({ namespace: "n", status: undefined, limit: 3, after });
      seen.push(...page.runs.map((r) => r.runId));
      if (page.next === undefined) break;
      after = page.next;
    }
    assert.deepEqual(seen, ["r0", "r3", "r6", "r1", "r4", "r2", "r5"]);
    const completed = await runs.list({
      namespace: "n",
      status: "Completed",
      limit: 10,
      after: undefined,
    });
    assert.deepEqual(
      completed.runs.map((r) => r.runId),
      ["r2"],
    );
    assert.equal(completed.next, undefined);
    const running = await runs.list({
      namespace: "n",
      status: "Running",
      limit: 10,
      after: undefined,
    });
    assert.equal(running.runs.length, 6);
    assert.equal(
      (await runs.list({ namespace: "x", status: undefined, limit: 10, after: undefined })).runs
        .length,
      0,
    );
  });
});
