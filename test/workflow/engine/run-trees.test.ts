// Run trees through the engine with real `skein worker` processes over the SQLite store
// stand-in: the outbox ceiling sampled from storage, no ceiling when the outbox is disabled,
// ordinary calls passing a full outbox, a three-level tree cancelled at the root (and by a
// deadline), and pause/resume.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";
import {
  parseDefinition,
  type WorkflowDefinition,
} from "../../../src/workflow/definitions/index.ts";
import {
  Engine,
  type EngineOptions,
  type HistoryEvent,
  type RunState,
} from "../../../src/workflow/engine/index.ts";
import { startWorkerEndpoint } from "../../../src/workflow/rpc/server.ts";
import { openRuns } from "../../support/sqlite-runs.ts";
import { until } from "../../support/until.ts";
import {
  ACTIVITIES,
  sessions,
  spawnWorker,
  tempDir,
  tokenFile,
  writeJson,
} from "../../support/worker-endpoint.ts";

/** The samplers' pace and deliberate windows; waits for a state use `until`. */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function setup(options: Partial<EngineOptions> = {}, library: WorkflowDefinition[] = []) {
  const dir = await tempDir();
  const store = openRuns(dir);
  const ended = new Map<string, RunState>();
  const engine = new Engine({
    store,
    definitions: async () => assert.fail("no recovery in this test"),
    onRunEnded: (runId, state) => ended.set(runId, state),
    childDefinition: async (_ns, workflow) => {
      const found = library.find((d) => d.name === workflow);
      if (found === undefined) throw new Error(`no workflow ${workflow}`);
      return found;
    },
    ...options,
  });
  const endpoint = await startWorkerEndpoint("127.0.0.1:0", {
    verify: async () => ({ subject: "t", worker: true, namespaces: "*" }),
    namespaceGate: async () => true,
    events: engine.matcherEvents,
  });
  engine.attach(endpoint.matcher);
  const token = await tokenFile(dir, "any");
  const worker = async (queue: string, concurrency: number) => {
    const doc = await writeJson(dir, `worker-${queue}.json`, {
      name: `w-${queue}`,
      task_queue: queue,
      actions: Object.fromEntries(
        ["inc", "hold", "noop"].map((name) => [name, { module: ACTIVITIES, export: name }]),
      ),
    });
    return spawnWorker([
      "module",
      doc,
      "--endpoint",
      `127.0.0.1:${endpoint.port}`,
      "--token-file",
      token,
      "--concurrency",
      String(concurrency),
    ]);
  };
  const start = async (definition: WorkflowDefinition, input: unknown, deadlineMs?: number) => {
    const runId = randomUUID();
    await engine.start({
      runId,
      workflowId: runId,
      namespace: "default",
      definition,
      inputJson: JSON.stringify(input),
      ...(deadlineMs === undefined ? {} : { deadlineMs }),
    });
    return runId;
  };
  const end = async (runId: string, ms?: number) => {
    await until(`the end of run ${runId}`, () => ended.has(runId), { timeoutMs: ms });
    return ended.get(runId)!;
  };
  const close = async () => {
    engine.close();
    await endpoint.close();
  };
  return { dir, store, engine, endpoint, worker, start, end, ended, close };
}

const FANOUT = parseDefinition(
  `
name: fanout
task_queue: q
steps:
  - id: each
    collect:
      items: input.items
      step: { id: one, call: { action: hold, input: "{ 'ms': item }" } }
output: "$count(steps.each)"
`,
  "yaml",
);

describe("the outbox with real workers", () => {
  test("claimed rows in storage never exceed the ceiling; the collect completes in order", async () => {
    const t = await setup({ outbox: { enabled: true, maxInFlight: 4 } });
    const w = await t.worker("q", 2);
    let sampling = true;
    let maxStored = 0;
    let samples = 0;
    const sampler = (async () => {
      while (sampling) {
        const claimed = (await t.store.outbox()).filter((r) => r.state === "claimed").length;
        maxStored = Math.max(maxStored, claimed);
        samples++;
        await sleep(5);
      }
    })();
    try {
      await sessions(t.endpoint, 1);
      const runId = await t.start(FANOUT, { items: Array(60).fill(15) });
      const state = await t.end(runId, 60_000);
      sampling = false;
      await sampler;
      assert.equal(state.status, "Completed");
      assert.ok(samples > 5, "the store was sampled while the run went on");
      assert.ok(maxStored <= 4, `claimed rows in storage peaked at ${maxStored} (ceiling 4)`);
      assert.equal(t.engine.maxClaimed, 4, "the ceiling was reached (workers hold 2 at a time)");
      const rows = await t.store.outbox();
      assert.equal(rows.length, 60, "one row per member");
      assert.ok(rows.every((r) => r.state === "done"));
      const history = await t.store.history(runId);
      const members = history.filter((e) => e.type === "ActivityScheduled");
      assert.ok(members.every((e) => e.type === "ActivityScheduled" && e.member === true));
      const endEvent = history.at(-1)!;
      assert.equal(endEvent.type === "RunCompleted" && endEvent.output_json, "60");
    } finally {
      sampling = false;
      w.kill();
      await w.exited;
      await t.close();
    }
  });

  test("outbox disabled: no ceiling applies and no rows are written", async () => {
    const t = await setup({ outbox: { enabled: false, maxInFlight: 4 } });
    const w = await t.worker("q", 2);
    let maxWaiting = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        maxWaiting = Math.max(maxWaiting, t.endpoint.matcher.stats().waiting);
        await sleep(2);
      }
    })();
    try {
      await sessions(t.endpoint, 1);
      const runId = await t.start(FANOUT, { items: Array(30).fill(15) });
      assert.equal((await t.end(runId, 60_000)).status, "Completed");
      sampling = false;
      await sampler;
      assert.ok(maxWaiting > 4, `all members went to the matcher at once (${maxWaiting} waiting)`);
      assert.deepEqual(await t.store.outbox(), []);
    } finally {
      sampling = false;
      w.kill();
      await w.exited;
      await t.close();
    }
  });

  test("ordinary calls are not held by a full outbox", async () => {
    const t = await setup({ outbox: { enabled: true, maxInFlight: 2 } });
    const slow = await t.worker("q", 1);
    const fast = await t.worker("fast", 4);
    try {
      await sessions(t.endpoint, 2);
      const fanout = await t.start(FANOUT, { items: Array(10).fill(60_000) });
      await until("a full outbox", () => t.engine.claimed("default") === 2);
      const call = parseDefinition(
        "name: one\ntask_queue: q\nsteps: [{id: a, call: {action: inc, task_queue: fast, input: \"{'n': 1}\"}}]",
        "yaml",
      );
      const runId = await t.start(call, {});
      assert.equal((await t.end(runId)).status, "Completed");
      assert.equal(t.engine.claimed("default"), 2, "the outbox was still full");
      const result = await t.engine.cancel(fanout);
      assert.deepEqual(result, { runId: fanout, applied: true, status: "Cancelled" });
      await until("aborted member handlers", () => t.endpoint.matcher.stats().holding === 0);
      assert.equal(t.engine.claimed("default"), 0, "the cancelled run's claims were freed");
    } finally {
      slow.kill();
      fast.kill();
      await Promise.all([slow.exited, fast.exited]);
      await t.close();
    }
  });
});

const LEAF = parseDefinition(
  "name: leaf\ntask_queue: q\nsteps: [{id: h, call: {action: hold, input: \"{'ms': 60000}\"}}]",
  "yaml",
);
const QUICK = parseDefinition(
  "name: quick\ntask_queue: q\nsteps: [{id: a, call: {action: inc, input: \"{'n': 1}\"}}]",
  "yaml",
);
const MID = parseDefinition(
  `
name: mid
task_queue: q
steps:
  - id: both
    parallel:
      branches:
        - { id: h, call: { action: hold, input: "{ 'ms': 60000 }" } }
        - { id: g, child: { workflow: leaf } }
`,
  "yaml",
);
const ROOT = parseDefinition(
  `
name: root
task_queue: q
steps:
  - id: kids
    parallel:
      branches:
        - { id: quick, child: { workflow: quick } }
        - { id: mid, child: { workflow: mid } }
        - { id: h, call: { action: hold, input: "{ 'ms': 60000 }" } }
`,
  "yaml",
);

/** The run ids of root's tree, once every level is running its handlers. */
async function liveTree(t: Awaited<ReturnType<typeof setup>>, root: string) {
  const childOf = (runId: string, step: string) =>
    t.engine.state(runId)?.children.get(step)?.childRunId;
  await until("a live three-level tree", () => {
    const mid = childOf(root, "mid");
    const leaf = mid === undefined ? undefined : childOf(mid, "g");
    const quickEnded = t.engine.state(root)?.children.get("quick")?.ended !== undefined;
    return (
      quickEnded &&
      leaf !== undefined &&
      t.endpoint.matcher.liveAttempts(root).length === 1 &&
      t.endpoint.matcher.liveAttempts(mid!).length === 1 &&
      t.endpoint.matcher.liveAttempts(leaf).length === 1
    );
  });
  const mid = childOf(root, "mid")!;
  return {
    quick: childOf(root, "quick")!,
    mid,
    leaf: childOf(mid, "g")!,
  };
}

const lastEvent = (history: readonly HistoryEvent[]) => history.at(-1);

describe("the cancellation cascade with real workers", () => {
  for (const trigger of ["requested", "deadline"] as const) {
    test(`${trigger}: every live descendant records its own RunCancelled; the completed child is untouched; handlers are aborted`, async () => {
      const t = await setup({ outbox: { enabled: true, maxInFlight: 16 } }, [LEAF, QUICK, MID]);
      const w = await t.worker("q", 8);
      try {
        await sessions(t.endpoint, 1);
        const root = await t.start(ROOT, {}, trigger === "deadline" ? 1500 : undefined);
        const tree = await liveTree(t, root);
        assert.equal((await t.end(tree.quick)).status, "Completed", "its end is durable");
        const quickBefore = await t.store.history(tree.quick);
        assert.equal(lastEvent(quickBefore)?.type, "RunCompleted");
        if (trigger === "requested") {
          const result = await t.engine.cancel(root);
          assert.deepEqual(result, { runId: root, applied: true, status: "Cancelled" });
        }
        for (const runId of [root, tree.mid, tree.leaf]) {
          assert.equal((await t.end(runId)).status, "Cancelled");
        }
        // In-flight handlers (60 s holds) were aborted: every slot comes free at once.
        await until("aborted handlers", () => t.endpoint.matcher.stats().holding === 0, {
          timeoutMs: 10_000,
        });
        for (const runId of [root, tree.mid, tree.leaf]) {
          const history = await t.store.history(runId);
          const cancels = history.filter((e) => e.type === "RunCancelled");
          assert.deepEqual(
            cancels.map((e) => e.type === "RunCancelled" && e.reason),
            [trigger],
            `run ${runId} records its own cancellation`,
          );
          assert.equal(lastEvent(history)?.type, "RunCancelled");
        }
        assert.deepEqual(await t.store.history(tree.quick), quickBefore);
        const again = await t.engine.cancel(root);
        assert.deepEqual(again, { runId: root, applied: false, status: undefined }, "no-op");
      } finally {
        w.kill();
        await w.exited;
        await t.close();
      }
    });
  }
});

describe("a descendant started concurrently with the cascade", () => {
  test("is cancelled too: no run of the tree is left Running", async () => {
    const chain = parseDefinition(
      "name: chain\nsteps: [{id: down, child: {workflow: leaf}}]",
      "yaml",
    );
    const top = parseDefinition("name: top\nsteps: [{id: down, child: {workflow: chain}}]", "yaml");
    const t = await setup({}, [LEAF, chain]);
    try {
      for (let round = 0; round < 5; round++) {
        const root = await t.start(top, {});
        // The child is registered (its start is durable) but has not decided yet: it starts
        // its own child in the same ticks as the cascade runs.
        await t.engine.cancel(root);
        await t.engine.idle();
        await until("every run of the tree ended", () => t.engine.running === 0);
        const runs = await t.store.runs();
        assert.ok(runs.length >= 2 * (round + 1));
        for (const run of runs) assert.equal(run.status, "Cancelled", `run ${run.runId}`);
      }
    } finally {
      await t.close();
    }
  });
});

describe("pause and resume with real workers", () => {
  test("a Paused run dispatches nothing new; work in flight finishes and is recorded", async () => {
    const t = await setup({ outbox: { enabled: true, maxInFlight: 16 } });
    const w = await t.worker("q", 4);
    try {
      await sessions(t.endpoint, 1);
      const def = parseDefinition(
        `
name: pausing
task_queue: q
steps:
  - { id: a, call: { action: hold, input: "{ 'ms': 300 }" } }
  - { id: b, call: { action: inc, input: "{ 'n': 1 }" } }
`,
        "yaml",
      );
      const runId = await t.start(def, {});
      await until("a in flight", () => t.endpoint.matcher.liveAttempts(runId).length === 1);
      assert.deepEqual(await t.engine.pause(runId), { runId, applied: true, status: "Paused" });
      assert.deepEqual(await t.engine.pause(runId), { runId, applied: false, status: "Paused" });
      await until(
        "a's result recorded while paused",
        () => t.engine.state(runId)?.activities.get(1)?.result !== undefined,
      );
      // Time passes on purpose: a paused run that wrongly went on would schedule b in it. Load
      // can only make this negative check weaker, never fail a correct engine.
      await sleep(100);
      assert.equal(t.engine.state(runId)?.activities.size, 1, "b was not scheduled while paused");
      assert.equal(t.engine.state(runId)?.status, "Paused");
      // The status is read when the resume is durable: the run may have finished by then.
      assert.equal((await t.engine.resume(runId)).applied, true);
      assert.equal((await t.end(runId)).status, "Completed");
      const types = (await t.store.history(runId)).map((e) => e.type);
      assert.deepEqual(types, [
        "RunStarted",
        "ActivityScheduled",
        "RunPaused",
        "ActivityCompleted",
        "RunResumed",
        "ActivityScheduled",
        "ActivityCompleted",
        "RunCompleted",
      ]);
    } finally {
      w.kill();
      await w.exited;
      await t.close();
    }
  });
});
