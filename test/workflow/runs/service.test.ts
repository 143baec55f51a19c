// RunService's describe that waits (`wait_ms`), over the real engine and SQLite run store:
// for a run started through the service and still held by the engine, the run is read once,
// after its end, not also before the wait; refusals (another run id, another namespace)
// and an ended run answer as before.

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

let dir: string;
let store: TestRunStore;
let engine: Engine;
let service: RunService;
/** Reads of a run by workflow id (the store's describe read). */
let reads = 0;

before(async () => {
  dir = await tempDir();
  store = openRuns(dir);
  const ends = new RunEnds(16);
  engine = new Engine({
    store,
    definitions: async () => assert.fail("no recovery in this test"),
    onRunEnded: (runId) => ends.ended(runId),
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

const start = () =>
  service.start({
    namespace: "default",
    definition: WAITER,
    inputJson: "{}",
    workflowId: undefined,
  });

describe("describe that waits for a run started here", () => {
  test("reads the run once, after its end", async () => {
    const { workflowId, runId } = await start();
    reads = 0;
    const described = service.describe("default", workflowId, undefined, 10_000);
    await engine.signal(runId, "go", '"done"');
    const run = await described;
    assert.equal(run.status, "Completed");
    assert.equal(run.outputJson, '"done"');
    assert.equal(reads, 1, "one read of the run, after the wait");
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
