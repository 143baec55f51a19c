// RunService's describe that waits (`wait_ms`), over the real engine and SQLite run store:
// for a run started through the service and still held by the engine, the run is not read
// before the wait, and once its end is durable the answer is the run as the engine reported
// it ended, the same record the store reads back (for each way a run ends); refusals
// (another run id, another namespace) and an ended run answer as before.

import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import { parseDefinition } from "../../../src/workflow/definitions/index.ts";
import { Engine } from "../../../src/workflow/engine/index.ts";
import { RunEnds } from "../../../src/workflow/runs/ends.ts";
import { RunService } from "../../../src/workflow/runs/service.ts";
import { openRuns, type TestRunStore } from "../../support/sqlite-runs.ts";
import { tempDir } from "../../support/worker-endpoint.ts";

const WAITER = parseDefinition(
  "name: waiter\nsteps:\n  - { id: w, wait: { signal: go } }\noutput: steps.w\n",
  "yaml",
);
/** Fails once signalled: its output expression raises an error. */
const FAILER = parseDefinition(
  'name: failer\nsteps:\n  - { id: w, wait: { signal: go } }\noutput: $error("no output")\n',
  "yaml",
);

let dir: string;
let store: TestRunStore;
let engine: Engine;
let service: RunService;
let ends: RunEnds;
/** Reads of a run by workflow id (the store's describe read). */
let reads = 0;

before(async () => {
  dir = await tempDir();
  store = openRuns(dir);
  // Registered, as every definition a run starts from is (the record shows its name).
  for (const d of [WAITER, FAILER]) {
    const { name, version, canonical } = d;
    await store.definitions.register({
      namespace: "default",
      name,
      version,
      canonical,
      registeredAt: 1,
      registeredBy: "test",
    });
  }
  ends = new RunEnds(16);
  engine = new Engine({
    store,
    definitions: async () => assert.fail("no recovery in this test"),
    onRunEnded: (runId, state) => ends.ended(runId, state),
  });
  const counted = {
    ...store,
    byWorkflowId: (namespace: string, workflowId: string) => {
      reads++;
      return store.byWorkflowId(namespace, workflowId);
    },
  };
  service = new RunService(engine, counted, ends);
});

after(async () => {
  engine.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const start = (definition = WAITER, deadlineMs?: number) =>
  service.start({
    namespace: "default",
    definition,
    inputJson: "{}",
    workflowId: undefined,
    ...(deadlineMs === undefined ? {} : { deadlineMs }),
  });

describe("describe that waits for a run started here", () => {
  const ways: [
    string,
    () => Promise<{ workflowId: string; runId: string }>,
    (runId: string) => unknown,
    string,
  ][] = [
    [
      "completed",
      () => start(),
      (runId) => engine.signal(runId, "go", '{"n": [1, 2.50]}'),
      "Completed",
    ],
    ["failed", () => start(FAILER), (runId) => engine.signal(runId, "go", "1"), "Failed"],
    ["cancelled", () => start(), (runId) => engine.cancel(runId), "Cancelled"],
    ["cancelled by its deadline", () => start(WAITER, 30), () => {}, "Cancelled"],
  ];
  for (const [way, begin, end, status] of ways) {
    test(`a run ${way}: answered at its end without a read, as the store reads it`, async () => {
      const { workflowId, runId } = await begin();
      reads = 0;
      const described = service.describe("default", workflowId, undefined, 10_000);
      await end(runId);
      const run = await described;
      assert.equal(reads, 0, "no read of the run");
      assert.equal(run.status, status);
      assert.deepEqual(run, await store.byWorkflowId("default", workflowId));
    });
  }

  test("a wait for a run read first (not started here) answers its end alike", async () => {
    const { workflowId, runId } = await start();
    const other = new RunService(engine, store, ends);
    const described = other.describe("default", workflowId, undefined, 10_000);
    // Signalled once the describe waits (it read the run first, as one not started here).
    const waiting = ends.waiting;
    while (ends.waiting === waiting) await new Promise((resolve) => setImmediate(resolve));
    await engine.signal(runId, "go", '"x"');
    assert.deepEqual(await described, await store.byWorkflowId("default", workflowId));
  });

  test("the same run id waits alike; another is run_not_found", async () => {
    const { workflowId, runId } = await start();
    await assert.rejects(service.describe("default", workflowId, crypto.randomUUID(), 1_000), {
      code: "run_not_found",
    });
    const described = service.describe("default", workflowId, runId, 10_000);
    await engine.signal(runId, "go", "1");
    assert.equal((await described).status, "Completed");
  });

  test("another namespace does not see it", async () => {
    const { workflowId, runId } = await start();
    await assert.rejects(service.describe("other", workflowId, undefined, 1_000), {
      code: "run_not_found",
    });
    await engine.signal(runId, "go", "1");
  });

  test("a live run whose wait runs out is answered as it stands", async () => {
    const { workflowId, runId } = await start();
    const run = await service.describe("default", workflowId, undefined, 20);
    assert.equal(run.status, "Running");
    assert.equal(run.runId, runId);
    await engine.signal(runId, "go", "1");
    // Ended: answered from the store at once, whatever the wait.
    const ended = await service.describe("default", workflowId, undefined, 10_000);
    assert.equal(ended.status, "Completed");
  });
});
