// The EngineStore contract as a reusable suite: every backend the server wires to the engine
// (the SQLite and PostgreSQL persistence) runs it, like the file store used by engine tests.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { EventOf, HistoryEvent } from "../../src/workflow/engine/history.ts";
import type { EngineStore, RunAppend } from "../../src/workflow/engine/store.ts";

const V = `sha256:${"ab".repeat(32)}`;

function started(runId: string): HistoryEvent {
  return {
    type: "RunStarted",
    at: 1,
    workflow_id: `wf-${runId}`,
    definition_version: V,
    input_json: '{"big":18446744073709551615}',
  };
}

function scheduled(activityId: number): EventOf<"ActivityScheduled"> {
  return {
    type: "ActivityScheduled",
    at: 2,
    activity_id: activityId,
    attempt: 1,
    step_id: `s${activityId}`,
    action: "act",
    task_queue: "q",
    input_json: '{"x":1.50}',
    dispatch_at: 2,
    start_to_close_ms: 1000,
    heartbeat_ms: 0,
  };
}

function append(
  runId: string,
  events: HistoryEvent[],
  status: RunAppend["status"] = "Running",
): RunAppend {
  return {
    runId,
    workflowId: `wf-${runId}`,
    namespace: "ns",
    definitionVersion: V,
    events,
    status,
  };
}

/** Runs the contract against a fresh, empty store from `make`. */
export function engineStoreConformance(name: string, make: () => Promise<EngineStore>): void {
  describe(`EngineStore contract: ${name}`, () => {
    test("an empty store has no running runs", async () => {
      assert.deepEqual(await (await make()).loadRunning(), []);
    });

    test("commits append in order; loadRunning returns whole histories with identities", async () => {
      const store = await make();
      await store.commit([append("a", [started("a")]), append("b", [started("b"), scheduled(1)])]);
      await store.commit([append("a", [scheduled(1)])]);
      await store.commit([
        append("a", [
          { type: "ActivityCompleted", at: 3, activity_id: 1, attempt: 1, output_json: "{}" },
        ]),
      ]);
      const runs = new Map((await store.loadRunning()).map((r) => [r.runId, r]));
      assert.deepEqual([...runs.keys()].sort(), ["a", "b"]);
      const a = runs.get("a")!;
      assert.deepEqual(
        {
          runId: a.runId,
          workflowId: a.workflowId,
          namespace: a.namespace,
          definitionVersion: a.definitionVersion,
        },
        { runId: "a", workflowId: "wf-a", namespace: "ns", definitionVersion: V },
      );
      assert.deepEqual(
        a.history.map((e) => e.type),
        ["RunStarted", "ActivityScheduled", "ActivityCompleted"],
      );
      assert.deepEqual(runs.get("b")!.history, [started("b"), scheduled(1)]);
    });

    test("JSON payloads come back as the same text (numbers exactly as written)", async () => {
      const store = await make();
      await store.commit([append("a", [started("a"), scheduled(1)])]);
      const [run] = await store.loadRunning();
      const [first, second] = run!.history;
      assert.equal(
        first?.type === "RunStarted" && first.input_json,
        '{"big":18446744073709551615}',
      );
      assert.equal(second?.type === "ActivityScheduled" && second.input_json, '{"x":1.50}');
    });

    test("a Paused run is loaded with the running ones (it has not ended)", async () => {
      const store = await make();
      await store.commit([append("a", [started("a")]), append("b", [started("b")])]);
      await store.commit([append("a", [{ type: "RunPaused", at: 5 }], "Paused")]);
      assert.deepEqual((await store.loadRunning()).map((r) => r.runId).sort(), ["a", "b"]);
    });

    test("outbox rows are written with the events that create them; later writes win", async () => {
      const store = await make();
      assert.deepEqual(await store.loadOutbox(), []);
      await store.commit([
        {
          ...append("a", [
            started("a"),
            { ...scheduled(1), member: true },
            { ...scheduled(2), member: true },
          ]),
          outbox: [
            { activityId: 1, attempt: 1, state: "pending" },
            { activityId: 2, attempt: 1, state: "pending" },
          ],
        },
      ]);
      const open = async () =>
        (await store.loadOutbox())
          .map((r) => `${r.runId} ${r.namespace} ${r.activityId}/${r.attempt} ${r.state}`)
          .sort();
      assert.deepEqual(await open(), ["a ns 1/1 pending", "a ns 2/1 pending"]);
      // Outbox writes alone (no events), several for one row in one commit: the last wins.
      await store.commit([
        {
          ...append("a", []),
          outbox: [
            { activityId: 1, attempt: 1, state: "claimed" },
            { activityId: 2, attempt: 1, state: "claimed" },
            { activityId: 2, attempt: 1, state: "done" },
          ],
        },
      ]);
      assert.deepEqual(await open(), ["a ns 1/1 claimed"]);
      const [run] = await store.loadRunning();
      assert.equal(run!.history.length, 3, "an outbox-only append adds no events");
    });

    for (const status of ["Completed", "Failed", "Cancelled"] as const) {
      test(`a run whose status became ${status} is not loaded as running`, async () => {
        const store = await make();
        await store.commit([append("a", [started("a")]), append("b", [started("b")])]);
        await store.commit([
          append("a", [{ type: "RunFailed", at: 5, code: "x", message: "y" }], status),
        ]);
        assert.deepEqual(
          (await store.loadRunning()).map((r) => r.runId),
          ["b"],
        );
      });
    }
  });
}
