// Workflow persistence as a reusable suite (definitions by content hash; run records, pages
// and histories): the SQLite and PostgreSQL backends both run it, next to the EngineStore
// contract (test/support/engine-store-conformance.ts).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { HistoryEvent } from "../../../src/workflow/engine/history.ts";
import { MAX_LISTED_VERSIONS } from "../../../src/workflow/persistence/sql/run-rows.ts";
import type { RunOrder, WorkflowPersistence } from "../../../src/workflow/persistence/workflows.ts";

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

    test("versions: every version of a name, the latest registered first", async () => {
      const { definitions } = await make();
      const base = { namespace: "v", name: "d", registeredBy: "t" };
      const V3 = `sha256:${"03".repeat(32)}`;
      await definitions.register({ ...base, version: V1, canonical: "{1}", registeredAt: 1 });
      await definitions.register({ ...base, version: V2, canonical: "{2}", registeredAt: 2 });
      await definitions.register({
        ...base,
        name: "other",
        version: V3,
        canonical: "{3}",
        registeredAt: 3,
      });
      const versions = await definitions.versions("v", "d");
      assert.deepEqual(
        versions.map((r) => [r.version, r.canonical, r.registeredAt, r.registeredBy]),
        [
          [V2, "{2}", 2, "t"],
          [V1, "{1}", 1, "t"],
        ],
      );
      // Registering an old version again makes it the latest: it moves to the front.
      await definitions.register({ ...base, version: V1, canonical: "{1}", registeredAt: 4 });
      assert.deepEqual(
        (await definitions.versions("v", "d")).map((r) => r.version),
        [V1, V2],
      );
      assert.deepEqual(await definitions.versions("v", "nope"), []);
      assert.deepEqual(await definitions.versions("elsewhere", "d"), []);
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

    test("history reads only a range of indexes, across commits", async () => {
      const { runs } = await make();
      const id = { runId: "r1", workflowId: "w1", namespace: "n", definitionVersion: V1 };
      const signal = (i: number): HistoryEvent => ({
        type: "SignalReceived",
        at: 100 + i,
        signal: `s${i}`,
        payload_json: String(i),
      });
      await runs.commit([{ ...id, events: [started(10, "w1"), signal(1)], status: "Running" }]);
      await runs.commit([{ ...id, events: [signal(2), signal(3)], status: "Running" }]);
      await runs.commit([{ ...id, events: [signal(4)], status: "Running" }]);
      const names = async (after: number, limit: number) =>
        (await runs.history("r1", { after, limit }))?.map((e) =>
          e.type === "SignalReceived" ? e.signal : e.type,
        );
      assert.deepEqual(await names(0, 2), ["RunStarted", "s1"]);
      assert.deepEqual(await names(1, 3), ["s1", "s2", "s3"]);
      assert.deepEqual(await names(3, 10), ["s3", "s4"]);
      assert.deepEqual(await names(5, 10), []);
      assert.deepEqual(await names(99, 1), []);
      assert.equal((await runs.history("r1"))?.length, 5);
      assert.equal(await runs.history("nope", { after: 0, limit: 1 }), undefined);
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

    test("list filters by definition name and start time, with status, through pages", async () => {
      const { runs, definitions } = await make();
      const V3 = `sha256:${"03".repeat(32)}`;
      const reg = { namespace: "f", canonical: "{}", registeredBy: "t", registeredAt: 1 };
      await definitions.register({ ...reg, name: "alpha", version: V1 });
      await definitions.register({ ...reg, name: "alpha", version: V2 });
      await definitions.register({ ...reg, name: "beta", version: V3 });
      // The same versions in another namespace under another name: never matched from "f".
      await definitions.register({ ...reg, namespace: "g", name: "gamma", version: V1 });
      const versions = [V1, V2, V3];
      // r0..r8 start at 100..108; definitions cycle V1, V2, V3 (alpha, alpha, beta).
      const batch = Array.from({ length: 9 }, (_, i) => ({
        runId: `r${i}`,
        workflowId: `w${i}`,
        namespace: "f",
        definitionVersion: versions[i % 3]!,
        events: [started(100 + i, `w${i}`)],
        status: "Running" as const,
      }));
      await runs.commit([
        ...batch,
        {
          ...batch[0]!,
          runId: "g0",
          workflowId: "g0",
          namespace: "g",
          events: [started(100, "g0")],
        },
      ]);
      await runs.commit([
        {
          ...batch[4]!,
          events: [{ type: "RunCompleted", at: 200, output_json: "1" }],
          status: "Completed",
        },
      ]);
      const all = async (query: Partial<Parameters<typeof runs.list>[0]>, limit = 2) => {
        const seen: string[] = [];
        let after: { startedAt: number; runId: string } | undefined;
        for (let pages = 0; ; pages++) {
          assert.ok(pages < 20);
          const page = await runs.list({
            namespace: "f",
            status: undefined,
            ...query,
            limit,
            after,
          });
          seen.push(...page.runs.map((r) => r.runId));
          if (page.next === undefined) return seen;
          after = page.next;
        }
      };
      assert.deepEqual(await all({ definition: "alpha" }), ["r0", "r1", "r3", "r4", "r6", "r7"]);
      assert.deepEqual(await all({ definition: "beta" }), ["r2", "r5", "r8"]);
      assert.deepEqual(await all({ definition: "gamma" }), []);
      assert.deepEqual(await all({ definition: "nope" }), []);
      // started_after is inclusive, started_before exclusive.
      assert.deepEqual(await all({ startedAfter: 103, startedBefore: 106 }), ["r3", "r4", "r5"]);
      assert.deepEqual(await all({ startedAfter: 107 }), ["r7", "r8"]);
      assert.deepEqual(await all({ startedBefore: 101 }), ["r0"]);
      assert.deepEqual(
        await all({ definition: "alpha", startedAfter: 101, startedBefore: 108 }, 1),
        ["r1", "r3", "r4", "r6", "r7"],
      );
      assert.deepEqual(await all({ definition: "alpha", status: "Running" }), [
        "r0",
        "r1",
        "r3",
        "r6",
        "r7",
      ]);
      assert.deepEqual(await all({ definition: "alpha", status: "Completed", startedAfter: 104 }), [
        "r4",
      ]);
      // Every record carries its definition's registered name.
      const page = await runs.list({
        namespace: "f",
        status: undefined,
        limit: 3,
        after: undefined,
      });
      assert.deepEqual(
        page.runs.map((r) => [r.runId, r.definitionName]),
        [
          ["r0", "alpha"],
          ["r1", "alpha"],
          ["r2", "beta"],
        ],
      );
      assert.equal((await runs.byWorkflowId("g", "g0"))?.definitionName, "gamma");
      assert.equal((await runs.byWorkflowId("f", "w5"))?.definitionName, "beta");
    });

    // A name's versions are read as one range each and merged (or, past MAX_LISTED_VERSIONS,
    // found by walking every run): either way the pages keep the order and the cursor.
    for (const count of [4, MAX_LISTED_VERSIONS + 1]) {
      test(`list by a definition of ${count} versions, among other runs, in both orders through pages`, async () => {
        const { runs, definitions } = await make();
        const reg = { namespace: "m", canonical: "{}", registeredBy: "t", registeredAt: 1 };
        const version = (k: number) => `sha256:${k.toString(16).padStart(64, "0")}`;
        await definitions.register({ ...reg, name: "other", version: version(0) });
        for (let k = 1; k <= count; k++) {
          await definitions.register({ ...reg, name: "many", version: version(k) });
        }
        // r00..r29 start at 100..109, three per millisecond (ties the run id breaks); odd
        // runs are of "many", spread over its versions out of start order.
        const ids = Array.from({ length: 30 }, (_, i) => `r${String(i).padStart(2, "0")}`);
        await runs.commit(
          ids.map((runId, i) => ({
            runId,
            workflowId: `w${runId}`,
            namespace: "m",
            definitionVersion: version(i % 2 === 0 ? 0 : 1 + ((i * 7) % count)),
            events: [started(100 + Math.floor(i / 3), `w${runId}`)],
            status: "Running" as const,
          })),
        );
        const walk = async (order: RunOrder) => {
          const seen: string[] = [];
          let after: { startedAt: number; runId: string } | undefined;
          for (let pages = 0; ; pages++) {
            assert.ok(pages < 20);
            const page = await runs.list({
              namespace: "m",
              status: undefined,
              definition: "many",
              limit: 2,
              after,
              order,
            });
            assert.ok(page.runs.every((r) => r.definitionName === "many"));
            seen.push(...page.runs.map((r) => r.runId));
            if (page.next === undefined) return seen;
            after = page.next;
          }
        };
        const odd = ids.filter((_, i) => i % 2 === 1);
        assert.deepEqual(await walk("oldest"), odd);
        assert.deepEqual(await walk("newest"), odd.toReversed());
      });
    }

    test("list newest first: start time then run id descending, with every filter, through pages", async () => {
      const { runs, definitions } = await make();
      const V3 = `sha256:${"03".repeat(32)}`;
      const reg = { namespace: "o", canonical: "{}", registeredBy: "t", registeredAt: 1 };
      await definitions.register({ ...reg, name: "alpha", version: V1 });
      await definitions.register({ ...reg, name: "alpha", version: V2 });
      await definitions.register({ ...reg, name: "beta", version: V3 });
      const versions = [V1, V2, V3];
      // r00..r11 start at 100..105, two runs per millisecond (a tie the run id breaks), with
      // definitions cycling alpha (V1), alpha (V2), beta (V3); every third run completes.
      const ids = Array.from({ length: 12 }, (_, i) => `r${String(i).padStart(2, "0")}`);
      const batch = ids.map((runId, i) => ({
        runId,
        workflowId: `w${runId}`,
        namespace: "o",
        definitionVersion: versions[i % 3]!,
        events: [started(100 + Math.floor(i / 2), `w${runId}`)],
        status: "Running" as const,
      }));
      // Another namespace's runs, newer than all of these: never listed from "o".
      await runs.commit([
        ...batch,
        {
          ...batch[0]!,
          runId: "x0",
          workflowId: "x0",
          namespace: "x",
          events: [started(999, "x0")],
        },
      ]);
      await runs.commit(
        batch
          .filter((_, i) => i % 3 === 0)
          .map((run) => ({
            ...run,
            events: [{ type: "RunCompleted" as const, at: 200, output_json: "1" }],
            status: "Completed" as const,
          })),
      );
      const startOf = (runId: string) => 100 + Math.floor(ids.indexOf(runId) / 2);
      const definitionOf = (runId: string) => (ids.indexOf(runId) % 3 === 2 ? "beta" : "alpha");
      const statusOf = (runId: string) => (ids.indexOf(runId) % 3 === 0 ? "Completed" : "Running");
      type Query = Partial<Parameters<typeof runs.list>[0]>;
      // What a filter should give: its runs by start time, then run id, in the asked order.
      const expected = (query: Query, order: "oldest" | "newest") => {
        const kept = ids.filter(
          (id) =>
            (query.status === undefined || statusOf(id) === query.status) &&
            (query.definition === undefined || definitionOf(id) === query.definition) &&
            (query.startedAfter === undefined || startOf(id) >= query.startedAfter) &&
            (query.startedBefore === undefined || startOf(id) < query.startedBefore),
        );
        return order === "newest" ? kept.reverse() : kept;
      };
      const walk = async (query: Query, order: "oldest" | "newest" | undefined, limit: number) => {
        const seen: string[] = [];
        let after: { startedAt: number; runId: string } | undefined;
        for (let pages = 0; ; pages++) {
          assert.ok(pages <= ids.length + 1, "the pages end");
          const page = await runs.list({
            namespace: "o",
            status: undefined,
            ...query,
            ...(order === undefined ? {} : { order }),
            limit,
            after,
          });
          assert.ok(page.runs.length <= limit);
          seen.push(...page.runs.map((r) => r.runId));
          if (page.next === undefined) return seen;
          after = page.next;
        }
      };
      const filters: Query[] = [
        {},
        { status: "Running" },
        { status: "Completed" },
        { definition: "alpha" },
        { definition: "beta", status: "Running" },
        { startedAfter: 101, startedBefore: 104 },
        { startedAfter: 103 },
        { startedBefore: 102 },
        { definition: "alpha", status: "Running", startedAfter: 101, startedBefore: 105 },
        { definition: "nope" },
        { startedAfter: 106 },
      ];
      for (const filter of filters) {
        for (const limit of [1, 2, 5, 100]) {
          for (const order of ["oldest", "newest"] as const) {
            const label = `${order} ${JSON.stringify(filter)} by ${limit}`;
            // Every run once, in order: no page loses or repeats one.
            assert.deepEqual(await walk(filter, order, limit), expected(filter, order), label);
          }
        }
      }
      assert.deepEqual(await walk({}, undefined, 5), ids, "no order is oldest first");
      assert.deepEqual((await walk({}, "newest", 100)).slice(0, 3), ["r11", "r10", "r09"]);
      // A page that ends exactly at the last run still says no more follow.
      const whole = await runs.list({
        namespace: "o",
        status: undefined,
        order: "newest",
        limit: 12,
        after: undefined,
      });
      assert.equal(whole.runs.length, 12);
      assert.equal(whole.next, undefined);
    });
  });
}
