/**
 * The persistence conformance suite: what every WorkflowStore backend must do, written once
 * against the interface. Each backend's test file calls `workflowStoreConformance` once with
 * its own opener; it runs every part (namespaces, deployments, transcripts, the EngineStore
 * contract, the workflow persistence reads).
 */

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { HistoryEvent } from "../../../src/workflow/engine/history.ts";
import { EVENTS_PER_ROW } from "../../../src/workflow/persistence/sql/run-commit.ts";
import type { WorkflowStore } from "../../../src/workflow/persistence/store.ts";
import type { WorkflowPersistence } from "../../../src/workflow/persistence/workflows.ts";
import { engineStoreConformance } from "../../support/engine-store-conformance.ts";
import { started, V1, workflowPersistenceConformance } from "./workflows-conformance.ts";

export interface Backend {
  /** Opens a store; the same `place` reopens the same durable data. */
  open(place: string): Promise<WorkflowStore>;
  /** A fresh place for a test. */
  fresh(): Promise<string>;
}

/** Every part of the contract against one backend; the stores it opens are closed after. */
export function workflowStoreConformance(name: string, backend: Backend): void {
  const opened: WorkflowStore[] = [];
  after(async () => {
    for (const store of opened) await store.close();
  });
  async function workflows(): Promise<WorkflowPersistence> {
    const store = await backend.open(await backend.fresh());
    opened.push(store);
    return store.workflows;
  }
  describe(`${name}: conformance`, () => {
    namespaceConformance(backend);
    deploymentConformance(backend);
    transcriptConformance(backend);
    runPositionConformance(backend);
  });
  engineStoreConformance(name, async () => (await workflows()).runs);
  workflowPersistenceConformance(name, workflows);
}

export function namespaceConformance(backend: Backend): void {
  const at = { createdAt: 1_700_000_000_000, createdBy: "tester" };

  test("create then get: the record comes back as stored", async () => {
    const store = await backend.open(await backend.fresh());
    try {
      const r = await store.namespaces.create({ name: "alpha", ...at });
      assert.equal(r.created, true);
      assert.deepEqual(r.record, {
        name: "alpha",
        createdAt: at.createdAt,
        createdBy: "tester",
        maxInFlightActivities: null,
      });
      assert.deepEqual(await store.namespaces.get("alpha"), r.record);
      assert.equal(await store.namespaces.get("beta"), undefined);
    } finally {
      await store.close();
    }
  });

  test("a repeated create reports created: false and keeps the first record", async () => {
    const store = await backend.open(await backend.fresh());
    try {
      await store.namespaces.create({ name: "alpha", ...at });
      const again = await store.namespaces.create({
        name: "alpha",
        createdAt: at.createdAt + 5,
        createdBy: "someone-else",
      });
      assert.equal(again.created, false);
      assert.equal(again.record.createdBy, "tester");
      assert.equal(again.record.createdAt, at.createdAt);
    } finally {
      await store.close();
    }
  });

  test("concurrent creates of one name: exactly one is created", async () => {
    const store = await backend.open(await backend.fresh());
    try {
      const results = await Promise.all(
        Array.from({ length: 8 }, () => store.namespaces.create({ name: "race", ...at })),
      );
      assert.equal(results.filter((r) => r.created).length, 1);
    } finally {
      await store.close();
    }
  });

  test("list is ordered by name; names are exact (case, spaces, unicode)", async () => {
    const store = await backend.open(await backend.fresh());
    try {
      for (const name of ["b", "a", "B", "my team", "ñandú"]) {
        await store.namespaces.create({ name, ...at });
      }
      const names = (await store.namespaces.list()).map((r) => r.name);
      assert.deepEqual(names, ["B", "a", "b", "my team", "ñandú"]);
    } finally {
      await store.close();
    }
  });

  test("usage counts runs by status and definitions; delete is refused while runs exist", async () => {
    const store = await backend.open(await backend.fresh());
    try {
      const workflows = store.workflows;
      await store.namespaces.create({ name: "busy", ...at });
      await store.namespaces.create({ name: "idle", ...at });
      const definition = { name: "d", canonical: "{}", registeredBy: "t", registeredAt: 1 };
      await workflows.definitions.register({ ...definition, namespace: "idle", version: V1 });
      await workflows.definitions.register({ ...definition, namespace: "busy", version: V1 });
      await workflows.runs.commit([
        {
          runId: "r1",
          workflowId: "w1",
          namespace: "busy",
          definitionVersion: V1,
          events: [started(10, "w1")],
          status: "Running",
        },
      ]);
      assert.deepEqual(await store.namespaces.usage("busy"), {
        runs: [["Running", 1]],
        definitions: 1,
      });
      assert.deepEqual(await store.namespaces.delete("busy"), { outcome: "has_runs", runs: 1 });
      assert.equal((await store.namespaces.get("busy"))?.name, "busy", "nothing was deleted");
      assert.equal((await workflows.definitions.latest("busy", "d"))?.version, V1);

      const deleted = await store.namespaces.delete("idle");
      assert.equal(deleted.outcome, "deleted");
      assert.equal(deleted.outcome === "deleted" && deleted.definitions, 1);
      assert.equal(await store.namespaces.get("idle"), undefined);
      assert.equal(
        await workflows.definitions.latest("idle", "d"),
        undefined,
        "definitions go too",
      );
      assert.deepEqual(await store.namespaces.usage("idle"), { runs: [], definitions: 0 });
      assert.deepEqual(await store.namespaces.delete("idle"), { outcome: "absent" });
    } finally {
      await store.close();
    }
  });

  test("a created namespace survives closing and reopening", async () => {
    const place = await backend.fresh();
    const first = await backend.open(place);
    await first.namespaces.create({ name: "kept", ...at });
    await first.close();
    const second = await backend.open(place);
    try {
      assert.equal((await second.namespaces.get("kept"))?.name, "kept");
    } finally {
      await second.close();
    }
  });
}

export function deploymentConformance(backend: Backend): void {
  test("deployments: put creates, put again replaces keeping created_at, list orders by name", async () => {
    const store = await backend.open(await backend.fresh());
    try {
      assert.equal(await store.deployments.get("b"), undefined);
      const first = await store.deployments.put("b", '{"v":1}', 1000);
      assert.deepEqual(first, { name: "b", document: '{"v":1}', createdAt: 1000, updatedAt: 1000 });
      const second = await store.deployments.put("b", '{"v":2}', 2000);
      assert.deepEqual(second, {
        name: "b",
        document: '{"v":2}',
        createdAt: 1000,
        updatedAt: 2000,
      });
      await store.deployments.put("a/x", "not json at all", 3000);
      assert.deepEqual(
        (await store.deployments.list()).map((r) => [r.name, r.document]),
        [
          ["a/x", "not json at all"],
          ["b", '{"v":2}'],
        ],
      );
    } finally {
      await store.close();
    }
  });

  test("deployments: delete returns the removed row once, then undefined; rows are durable", async () => {
    const place = await backend.fresh();
    const store = await backend.open(place);
    await store.deployments.put("gone", "{}", 5);
    await store.deployments.put("kept", "{}", 6);
    assert.equal((await store.deployments.delete("gone"))?.name, "gone");
    assert.equal(await store.deployments.delete("gone"), undefined);
    await store.close();
    const reopened = await backend.open(place);
    try {
      assert.deepEqual(
        (await reopened.deployments.list()).map((r) => r.name),
        ["kept"],
      );
    } finally {
      await reopened.close();
    }
  });
}

export function transcriptConformance(backend: Backend): void {
  test("transcripts: entries per attempt, in arrival order, durable across a reopen", async () => {
    const place = await backend.fresh();
    const a = { run_id: "r1", activity_id: 0, attempt: 1 };
    const b = { run_id: "r1", activity_id: 0, attempt: 2 };
    const store = await backend.open(place);
    try {
      assert.deepEqual(await store.transcripts.list(a), []);
      for (let i = 0; i < 12; i++) await store.transcripts.append(a, `{"n":${i}}`, 1000 + i);
      await store.transcripts.append(b, '{"other":true}', 2000);
    } finally {
      await store.close();
    }
    const again = await backend.open(place);
    try {
      assert.deepEqual(
        await again.transcripts.list(a),
        Array.from({ length: 12 }, (_, i) => `{"n":${i}}`),
      );
      assert.deepEqual(await again.transcripts.list(b), ['{"other":true}']);
      assert.deepEqual(await again.transcripts.list({ ...a, activity_id: 1 }), []);
    } finally {
      await again.close();
    }
  });

  test("transcripts: a run's attempts that have one, each once, none for another run", async () => {
    const store = await backend.open(await backend.fresh());
    try {
      assert.deepEqual(await store.transcripts.attempts("r1"), []);
      await store.transcripts.append({ run_id: "r1", activity_id: 3, attempt: 2 }, "{}", 1);
      await store.transcripts.append({ run_id: "r1", activity_id: 1, attempt: 1 }, "{}", 2);
      await store.transcripts.append({ run_id: "r1", activity_id: 3, attempt: 2 }, "{}", 3);
      await store.transcripts.append({ run_id: "r2", activity_id: 2, attempt: 1 }, "{}", 4);
      assert.deepEqual(await store.transcripts.attempts("r1"), [
        { activity_id: 1, attempt: 1 },
        { activity_id: 3, attempt: 2 },
      ]);
      assert.deepEqual(await store.transcripts.attempts("r3"), []);
    } finally {
      await store.close();
    }
  });
}

const runId = (run: string) => ({
  runId: run,
  workflowId: `w-${run}`,
  namespace: "n",
  definitionVersion: V1,
});
const timer = (at: number): HistoryEvent => ({
  type: "TimerStarted",
  at,
  timer_id: `t${at}`,
  fire_at: at,
});

export function runPositionConformance(backend: Backend): void {
  test("an append of more events than a row holds: ranges across its rows, and positions after them", async () => {
    const place = await backend.fresh();
    const first = await backend.open(place);
    const many = Array.from({ length: 2 * EVENTS_PER_ROW + 6 }, (_, i) => timer(10 + i));
    const last = 10 + many.length - 1;
    try {
      await first.workflows.runs.commit([
        { ...runId("a"), events: [started(1, "w-a"), ...many], status: "Running" },
      ]);
    } finally {
      await first.close();
    }
    // Reopened without a load: the next append continues after the last row's last event.
    const second = await backend.open(place);
    try {
      const { runs } = second.workflows;
      await runs.commit([{ ...runId("a"), events: [timer(1000)], status: "Running" }]);
      const at = async (range?: { after: number; limit: number }) =>
        (await runs.history("a", range))?.map((e) => e.at);
      assert.deepEqual(await at(), [1, ...many.map((e) => e.at), 1000]);
      const row = EVENTS_PER_ROW;
      assert.deepEqual(await at({ after: row - 1, limit: 3 }), [row + 8, row + 9, row + 10]);
      assert.deepEqual(await at({ after: 2 * row + 5, limit: 10 }), [last - 1, last, 1000]);
      assert.deepEqual(
        await at({ after: 3, limit: 2 * row }),
        many.slice(2, 2 + 2 * row).map((e) => e.at),
      );
      assert.equal((await runs.byWorkflowId("n", "w-a"))?.updatedAt, 1000);
      const loaded = await runs.loadRunning();
      assert.deepEqual(
        loaded.map((r) => [r.runId, r.history.length]),
        [["a", many.length + 2]],
      );
    } finally {
      await second.close();
    }
  });

  test("a live run's row is written on transitions only, yet reads show its status and last event's time", async () => {
    const place = await backend.fresh();
    const first = await backend.open(place);
    const read = async ({ runs }: WorkflowPersistence) => {
      const run = await runs.byWorkflowId("n", "w-a");
      const page = await runs.list({
        namespace: "n",
        status: undefined,
        limit: 10,
        after: undefined,
      });
      assert.equal(page.runs[0]?.updatedAt, run?.updatedAt, "a list page says the same");
      return [run?.status, run?.startedAt, run?.updatedAt, run?.endedAt];
    };
    const step = (at: number, status: "Running" | "Paused") =>
      first.workflows.runs.commit([{ ...runId("a"), events: [timer(at)], status }]);
    try {
      await first.workflows.runs.commit([
        { ...runId("a"), events: [started(1, "w-a"), timer(2)], status: "Running" },
      ]);
      assert.deepEqual(await read(first.workflows), ["Running", 1, 2, null]);
      await step(3, "Running");
      assert.deepEqual(await read(first.workflows), ["Running", 1, 3, null]);
      await first.workflows.runs.commit([
        { ...runId("a"), events: [{ type: "RunPaused", at: 4 }], status: "Paused" },
      ]);
      await step(5, "Paused");
      assert.deepEqual(await read(first.workflows), ["Paused", 1, 5, null]);
    } finally {
      await first.close();
    }
    // Reopened: the store learns the row's status from its load, and a resume rewrites it.
    const second = await backend.open(place);
    try {
      assert.deepEqual(
        (await second.workflows.runs.loadRunning()).map((r) => [r.runId, r.history.length]),
        [["a", 5]],
      );
      await second.workflows.runs.commit([
        { ...runId("a"), events: [{ type: "RunResumed", at: 6 }, timer(7)], status: "Running" },
      ]);
      assert.deepEqual(await read(second.workflows), ["Running", 1, 7, null]);
      await second.workflows.runs.commit([
        {
          ...runId("a"),
          events: [{ type: "RunCompleted", at: 8, output_json: "1" }],
          status: "Completed",
        },
      ]);
      assert.deepEqual(await read(second.workflows), ["Completed", 1, 8, 8]);
      assert.deepEqual(
        (await second.workflows.runs.history("a"))?.map((e) => e.at),
        [1, 2, 3, 4, 5, 6, 7, 8],
      );
      assert.deepEqual(await second.workflows.runs.loadRunning(), []);
    } finally {
      await second.close();
    }
  });

  test("runs not in memory continue their histories from their rows, several in one commit", async () => {
    const place = await backend.fresh();
    const first = await backend.open(place);
    await first.workflows.runs.commit(
      ["a", "b"].map((r) => ({ ...runId(r), events: [started(1, `w-${r}`)], status: "Running" })),
    );
    await first.workflows.runs.commit([{ ...runId("a"), events: [timer(2)], status: "Running" }]);
    await first.close();
    const second = await backend.open(place);
    try {
      await continueRuns(second.workflows);
    } finally {
      await second.close();
    }
  });
}

/** Commits to a, b (stored, not loaded) and c (new), each of a and c twice in one batch. */
async function continueRuns({ runs }: WorkflowPersistence): Promise<void> {
  await runs.commit([
    { ...runId("a"), events: [timer(3)], status: "Running" },
    { ...runId("b"), events: [timer(4)], status: "Running" },
    { ...runId("c"), events: [started(5, "w-c")], status: "Running" },
    {
      ...runId("a"),
      events: [{ type: "RunCompleted", at: 6, output_json: "1" }],
      status: "Completed",
    },
    { ...runId("c"), events: [timer(8)], status: "Paused" },
  ]);
  await runs.commit([{ ...runId("b"), events: [timer(7)], status: "Running" }]);
  const times = async (r: string) => (await runs.history(r))?.map((e) => e.at);
  assert.deepEqual(await times("a"), [1, 2, 3, 6]);
  assert.deepEqual(await times("b"), [1, 4, 7]);
  assert.deepEqual(await times("c"), [5, 8]);
  // A run appended to twice in one batch: one row, with its first start and its last status.
  const row = async (r: string) => {
    const run = await runs.byWorkflowId("n", `w-${r}`);
    return [run?.status, run?.startedAt, run?.updatedAt, run?.endedAt, run?.outputJson];
  };
  assert.deepEqual(await row("a"), ["Completed", 1, 6, 6, "1"]);
  assert.deepEqual(await row("c"), ["Paused", 5, 8, null, null]);
  assert.deepEqual((await runs.loadRunning()).map((r) => [r.runId, r.history.length]).sort(), [
    ["b", 3],
    ["c", 2],
  ]);
}
