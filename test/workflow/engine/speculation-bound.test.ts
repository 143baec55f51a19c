// The engine sends a run's next activity before the commit that schedules it lands (so a
// worker runs it while the store syncs), but only SPECULATION_DEPTH decisions deep: past
// that, the run's further effects wait for a commit to land. A stalled store therefore
// stops runs a bounded number of steps ahead instead of letting them finish ahead of their
// history. Real engine,
// matcher, SQLite run store and `skein worker` process; the store's commits are gated by a
// wrapper of the same interface (fault injection, STYLE.md 5).

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { parseDefinition } from "../../../src/workflow/definitions/index.ts";
import { Engine, type RunState } from "../../../src/workflow/engine/index.ts";
import { SPECULATION_DEPTH } from "../../../src/workflow/engine/speculation.ts";
import type { EngineStore, RunAppend } from "../../../src/workflow/engine/store.ts";
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The run store, with commits that wait while `stalled` (each still lands, in order). */
function gated(store: EngineStore) {
  let open: () => void = () => {};
  let gate: Promise<void> | undefined;
  return {
    stall() {
      gate = new Promise((resolve) => {
        open = resolve;
      });
    },
    resume() {
      gate = undefined;
      open();
    },
    store: {
      async commit(batch: readonly RunAppend[]) {
        if (gate !== undefined) await gate;
        await store.commit(batch);
      },
      loadRunning: () => store.loadRunning(),
      loadOutbox: () => store.loadOutbox(),
    } satisfies EngineStore,
  };
}

test("a run goes at most SPECULATION_DEPTH steps ahead of its history while the store stalls", async () => {
  const dir = await tempDir();
  const runs = openRuns(dir);
  const gate = gated(runs);
  let completed = 0;
  let ended: (state: RunState) => void = () => {};
  const engine = new Engine({
    store: gate.store,
    definitions: async () => assert.fail("no recovery in this test"),
    onRunEnded: (_runId, state) => ended(state),
  });
  const endpoint = await startWorkerEndpoint("127.0.0.1:0", {
    verify: async () => ({ subject: "t", worker: true, namespaces: "*" }),
    namespaceGate: async () => true,
    events: {
      ...engine.matcherEvents,
      completed: (ref, output, ctx, receipt) => {
        completed++;
        engine.matcherEvents.completed(ref, output, ctx, receipt);
      },
    },
  });
  engine.attach(endpoint.matcher);
  const doc = await writeJson(dir, "worker.json", {
    name: "w",
    task_queue: "q",
    actions: { inc: { module: ACTIVITIES, export: "inc" } },
  });
  const worker = spawnWorker([
    "module",
    doc,
    "--endpoint",
    `127.0.0.1:${endpoint.port}`,
    "--token-file",
    await tokenFile(dir, "any"),
  ]);
  try {
    await sessions(endpoint, 1);
    const steps = Array.from(
      { length: SPECULATION_DEPTH + 3 },
      (_, i) => `  - { id: s${i}, call: { action: inc, input: "{ 'n': ${i} }" } }`,
    );
    const definition = parseDefinition(
      `name: steps\ntask_queue: q\nsteps:\n${steps.join("\n")}\n`,
      "yaml",
    );
    const runId = randomUUID();
    const done = new Promise<RunState>((resolve) => {
      ended = resolve;
    });
    // Every commit from here on waits: the start's commit (RunStarted, the first step
    // scheduled) among them.
    gate.stall();
    const started = engine.start({
      runId,
      workflowId: randomUUID(),
      namespace: "default",
      definition,
      inputJson: "{}",
    });
    await until("SPECULATION_DEPTH steps to complete", () => completed >= SPECULATION_DEPTH);
    // Time passes on purpose: without the bound the next steps would run in this window (a
    // loaded machine can only make this negative check weaker, never fail a correct engine).
    await sleep(1_000);
    // SPECULATION_DEPTH steps went out before any commit landed; the next waits. Without
    // the bound every step would have run by now.
    assert.equal(completed, SPECULATION_DEPTH);
    assert.deepEqual(await runs.history(runId), []);
    gate.resume();
    await started;
    const state = await done;
    assert.equal(state.status, "Completed");
    const history = await runs.history(runId);
    assert.deepEqual(
      history.filter((e) => e.type === "ActivityCompleted").map((e) => e.activity_id),
      Array.from({ length: SPECULATION_DEPTH + 3 }, (_, i) => i + 1),
      "each step completed once, in order",
    );
    assert.equal(completed, SPECULATION_DEPTH + 3);
  } finally {
    worker.kill();
    await worker.exited;
    engine.close();
    await endpoint.close();
    await runs.close();
  }
});
