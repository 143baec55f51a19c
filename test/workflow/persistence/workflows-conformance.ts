// Workflow persistence as a reusable suite (definitions by content hash; run records, pages
// and histories): the SQLite and PostgreSQL backends both run it, next to the EngineStore
// contract (test/support/engine-store-conformance.ts).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { HistoryEvent } from "../../../src/workflow/engine/history.ts";
import type { WorkflowPersistence } from "../../../src/workflow/persistence/workflows.ts";

export const V1 = `sha256:${"01".repeat(32)}`;
const V2 = `sha256:${"02".repeat(32)}`;

export function started(at: number, workflowId: string): HistoryEvent {
  return {
    type: "RunStarted",
    at,
    workflow_id: workflowId,
    definition_version: V1,
    input_json: "{}",
  };
}

/** Runs the suite against fresh, empty persistence from `make`. */
export function workflowPersistenceConformance(
  name: string,
  make: () => Promise<WorkflowPersistence>,
): void {
  describe(`definitions: ${name}`, () => {
    test("a version is stored once per namespace; the last registration is the latest", async () => {
      const { definitions } = await make();
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

    test("list: each name once with its latest version and version count, by name", async () => {
      const { definitions } = await make();
      const base = { namespace: "l", canonical: "{}", registeredBy: "t" };
      await definitions.register({ ...base, name: "zeta", version: V1, registeredAt: 1 });
      await definitions.register({ ...base, name: "alpha", version: V2, registeredAt: 2 });
      const V3 = `sha256:${"03".repeat(32)}`;
      await definitions.register({ ...base, name: "zeta", version: V3, registeredAt: 3 });
      assert.deepEqual(await definitions.list("l"), [
        { name: "alpha", version: V2, registeredAt: 2, registeredBy: "t", versions: 1 },
        { name: "zeta", version: V3, registeredAt: 3, registeredBy: "t", versions: 2 },
      ]);
      assert.deepEqual(await definitions.list("other"), []);
    });
  });

  describe(`runs: ${name}`, () => {
    test("a run row follows its commits: status, times, output, failure", async () => {
      const { runs } = await make();
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

    test("list filters by status and pages with a stable cursor", async () => {
      const { runs } = await make();
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
}
