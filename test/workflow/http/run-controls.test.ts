// Run trees and run controls through the real server: `skein serve` (SQLite, outbox on) and
// a real `skein worker`. Signals, pause/resume, cancellation with its cascade to a child run,
// and a collect whose members go through the outbox, all over HTTP.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { until } from "../../support/until.ts";
import { ACTIVITIES, spawnWorker, writeJson } from "../../support/worker-endpoint.ts";
import {
  adminToken,
  call,
  type ServerProcess,
  skein,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";

const DEFINITIONS = [
  "name: waiter\nsteps:\n  - { id: w, wait: { signal: go } }\noutput: steps.w\n",
  "name: sleeper\nsteps:\n  - { id: s, sleep: { duration_ms: 600000 } }\n",
  "name: parent\nsteps:\n  - { id: c, child: { workflow: sleeper, input: '{}' } }\n",
  'name: fan\ntask_queue: q\nsteps:\n  - id: all\n    collect:\n      items: input.xs\n      step: { id: one, call: { action: inc, input: "{ \'n\': item }" } }\noutput: "steps.all.n"\n',
];

let dir: { path: string; remove: () => Promise<void> };
let server: ServerProcess;
let token: string;
let worker: ReturnType<typeof spawnWorker>;

const api = (path: string, body: object, bearer = token) =>
  call(server.url, "POST", path, { token: bearer, body });

async function start(name: string, input: object = {}): Promise<string> {
  const r = await api("/workflows/start", { name, input });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.workflow_id;
}

async function status(workflowId: string): Promise<string> {
  const r = await api("/workflows/describe", { workflow_id: workflowId });
  return r.body.run.status;
}

async function runOf(workflowId: string, wanted: string) {
  return until(`${workflowId} ${wanted}`, async () => {
    const r = await api("/workflows/describe", { workflow_id: workflowId });
    return r.body.run?.status === wanted ? r.body.run : undefined;
  });
}

async function events(workflowId: string): Promise<{ type: string; [k: string]: unknown }[]> {
  const r = await api("/workflows/history", { workflow_id: workflowId });
  return r.body.events;
}

before(async () => {
  dir = await tempDir();
  server = await startServe(
    await writeConfig(
      dir.path,
      '[namespaces]\ndefault = "default"\nmax_in_flight_activities = 2\n[outbox]\nenabled = true',
    ),
  );
  token = await adminToken(dir.path);
  for (const definition of DEFINITIONS) {
    const r = await api("/workflows/definitions", { definition });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  const tokenFile = join(dir.path, "worker.token");
  await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
  const document = await writeJson(dir.path, "worker.json", {
    name: "w",
    task_queue: "q",
    actions: { inc: { module: ACTIVITIES, export: "inc" } },
  });
  worker = spawnWorker(["module", document, "--endpoint", server.grpc!, "--token-file", tokenFile]);
});

after(async () => {
  worker?.kill();
  await server?.stop();
  await dir?.remove();
});

describe("run controls over HTTP", () => {
  test("a signal completes a waiting run with its payload", async () => {
    const id = await start("waiter");
    const r = await api("/workflows/signal", { workflow_id: id, signal: "go", payload: { n: 5 } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.applied, true);
    const run = await runOf(id, "Completed");
    assert.deepEqual(run.output, { n: 5 });
  });

  test("pause then resume a run; a second pause of a paused run is not applied", async () => {
    const id = await start("sleeper");
    const paused = await api("/workflows/pause", { workflow_id: id });
    assert.deepEqual(
      [paused.status, paused.body.applied, paused.body.status],
      [200, true, "Paused"],
    );
    assert.equal(await status(id), "Paused");
    const again = await api("/workflows/pause", { workflow_id: id });
    assert.equal(again.body.applied, false);
    const resumed = await api("/workflows/resume", { workflow_id: id });
    assert.deepEqual([resumed.body.applied, resumed.body.status], [true, "Running"]);
    await api("/workflows/cancel", { workflow_id: id });
  });

  test("cancel cascades to the child run; cancelling again is a no-op answer", async () => {
    const id = await start("parent");
    const child = await until("the child run", async () => {
      const started = (await events(id)).find((e) => e.type === "ChildStarted");
      // A child run's workflow id is its run id.
      return started === undefined ? undefined : (started.child_run_id as string | undefined);
    });
    await runOf(child, "Running");
    const r = await api("/workflows/cancel", { workflow_id: id });
    assert.deepEqual([r.status, r.body.applied, r.body.status], [200, true, "Cancelled"]);
    await runOf(id, "Cancelled");
    await runOf(child, "Cancelled");
    const childEvents = await events(child);
    assert.equal(childEvents.filter((e) => e.type === "RunCancelled").length, 1);
    const repeat = await api("/workflows/cancel", { workflow_id: id });
    assert.deepEqual(
      [repeat.status, repeat.body.applied, repeat.body.status],
      [200, false, "Cancelled"],
    );
  });

  test("a collect's members go through the outbox and their results come back in order", async () => {
    const id = await start("fan", { xs: [1, 2, 3, 4, 5, 6, 7] });
    const run = await runOf(id, "Completed");
    assert.deepEqual(run.output, [2, 3, 4, 5, 6, 7, 8]);
  });

  test("skein workflow signal|pause|resume|cancel drive the same endpoints", async () => {
    const env = { SKEIN_SERVER: server.url, SKEIN_TOKEN: token };
    const waiting = await start("waiter");
    const signalled = skein(["workflow", "signal", waiting, "go", "--payload", '{"n":1}'], env);
    assert.equal(signalled.status, 0, signalled.stderr);
    assert.equal(JSON.parse(signalled.stdout).applied, true);
    assert.deepEqual((await runOf(waiting, "Completed")).output, { n: 1 });
    const sleeping = await start("sleeper");
    for (const [verb, wanted] of [
      ["pause", "Paused"],
      ["resume", "Running"],
      ["cancel", "Cancelled"],
    ] as const) {
      const r = skein(["workflow", verb, sleeping], env);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), {
        workflow_id: sleeping,
        run_id: JSON.parse(r.stdout).run_id,
        applied: true,
        status: wanted,
      });
    }
    const usage = skein(["workflow", "cancel", sleeping, "--payload", "{}"], env);
    assert.equal(usage.status, 2);
  });

  test("a deadline given at start cancels the run and its child with reason deadline", async () => {
    const r = await api("/workflows/start", { name: "parent", deadline_ms: 300 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const id = r.body.workflow_id;
    const run = await runOf(id, "Cancelled");
    assert.match(run.failure.message, /deadline/);
    const child = (await events(id)).find((e) => e.type === "ChildStarted")!.child_run_id as string;
    await runOf(child, "Cancelled");
    const cancelled = (await events(child)).filter((e) => e.type === "RunCancelled");
    assert.deepEqual(
      cancelled.map((e) => e.reason),
      ["deadline"],
    );
    const zero = await api("/workflows/start", { name: "sleeper", deadline_ms: 0 });
    assert.equal(zero.status, 400);
  });

  test("controls need the namespace grant and a known run", async () => {
    const stranger = await tokenFor(dir.path, { subject: "s", namespaces: ["elsewhere"] });
    const id = await start("sleeper");
    const denied = await api("/workflows/cancel", { workflow_id: id }, stranger);
    assert.equal(denied.status, 403);
    const absent = await api("/workflows/cancel", {
      workflow_id: "00000000-0000-4000-8000-000000000000",
    });
    assert.deepEqual([absent.status, absent.body.error.code], [404, "run_not_found"]);
    const bad = await api("/workflows/signal", { workflow_id: id, signal: "" });
    assert.equal(bad.status, 400);
    await api("/workflows/cancel", { workflow_id: id });
  });
});
