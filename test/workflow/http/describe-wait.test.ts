// `POST /workflows/describe` with `wait_ms`: the long poll that lets a client await a run's
// end without polling. Through the real `skein serve`: the answer comes once the run's end
// is durable, or with the live run when the wait runs out; an ended run answers at once;
// the bound and the types of `wait_ms` are refused with the decode code; the CLI's
// `skein workflow describe --wait` drives the same field.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { until } from "../../support/until.ts";
import {
  adminToken,
  call,
  type ServerProcess,
  SKEIN_BIN,
  skein,
  startServe,
  tempDir,
  writeConfig,
} from "../support/server.ts";

const run = promisify(execFile);
const FIXED = "0b9e5f4a-4c1d-4e2f-9a3b-5c6d7e8f9a0b";
const WAITER = "name: waiter\nsteps:\n  - { id: w, wait: { signal: go } }\noutput: steps.w\n";

let dir: { path: string; remove: () => Promise<void> };
let server: ServerProcess;
let token: string;

const api = (path: string, body: object) => call(server.url, "POST", path, { token, body });

async function start(): Promise<string> {
  const r = await api("/workflows/start", { name: "waiter" });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.workflow_id;
}

const signal = (workflowId: string, payload: unknown) =>
  api("/workflows/signal", { workflow_id: workflowId, signal: "go", payload });

before(async () => {
  dir = await tempDir();
  server = await startServe(await writeConfig(dir.path, '[namespaces]\ndefault = "default"'));
  token = await adminToken(dir.path);
  const r = await api("/workflows/definitions", { definition: WAITER });
  assert.equal(r.status, 200, JSON.stringify(r.body));
});

after(async () => {
  await server.stop();
  await dir.remove();
});

describe("describe with wait_ms", { timeout: 30_000 }, () => {
  test("answers once the run has ended, with its durable end", async () => {
    const id = await start();
    let answered = false;
    const waiting = api("/workflows/describe", { workflow_id: id, wait_ms: 20_000 }).then((r) => {
      answered = true;
      return r;
    });
    // Time passes on purpose: a describe that did not wait would answer in this window (load
    // can only make this negative check weaker, never fail a correct server).
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(answered, false, "the run is still waiting for its signal");
    assert.equal((await signal(id, { n: 7 })).status, 200);
    const r = await waiting;
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.run.status, "Completed");
    assert.deepEqual(r.body.run.output, { n: 7 });
    assert.notEqual(r.body.run.ended_at, null);
  });

  test("answers with the live run when the wait runs out", async () => {
    const id = await start();
    const before = Date.now();
    const r = await api("/workflows/describe", { workflow_id: id, wait_ms: 300 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.run.status, "Running");
    assert.ok(Date.now() - before >= 250, "it waited");
    await signal(id, null);
  });

  test("a run that has ended answers at once; wait_ms 0 never waits", async () => {
    const id = await start();
    await signal(id, 1);
    const ended = await api("/workflows/describe", { workflow_id: id, wait_ms: 60_000 });
    assert.equal(ended.body.run.status, "Completed");
    const live = await start();
    const r = await api("/workflows/describe", { workflow_id: live, wait_ms: 0 });
    assert.equal(r.body.run.status, "Running");
    await signal(live, null);
  });

  test("an unknown workflow id is run_not_found, waiting or not", async () => {
    const r = await api("/workflows/describe", {
      workflow_id: "00000000-0000-4000-8000-000000000000",
      wait_ms: 1_000,
    });
    assert.equal(r.status, 404);
    assert.equal(r.body.error.code, "run_not_found");
  });

  for (const [label, wait] of [
    ["above 60000", 60_001],
    ["negative", -1],
    ["a fraction", 1.5],
    ["a string", "100"],
    ["null", null],
  ] as const) {
    test(`wait_ms ${label} is refused: 400 decode_refused naming wait_ms`, async () => {
      const id = await start();
      const r = await api("/workflows/describe", { workflow_id: id, wait_ms: wait });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error.code, "decode_refused");
      assert.match(r.body.error.message, /wait_ms/);
      await signal(id, null);
    });
  }

  test("skein workflow describe --wait waits for the end; a bad --wait is a usage error", async () => {
    const id = await start();
    const env = { ...process.env, SKEIN_SERVER: server.url, SKEIN_TOKEN: token };
    const described = run(
      process.execPath,
      [SKEIN_BIN, "workflow", "describe", id, "--wait", "20000"],
      { env },
    );
    // A moment for the command to start waiting; one that starts late finds the run ended,
    // and what is checked below holds either way.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await signal(id, { done: true });
    const { stdout } = await described;
    const answer = JSON.parse(stdout);
    assert.equal(answer.status, "Completed");
    assert.deepEqual(answer.output, { done: true });
    for (const bad of ["soon", "60001", "-5"]) {
      const usage = skein(["workflow", "describe", id, "--wait", bad], env);
      assert.equal(usage.status, 2, usage.stderr);
      assert.match(usage.stderr, /--wait/);
    }
    // start --wait: starts the run and prints it once it has ended.
    const started = run(
      process.execPath,
      [SKEIN_BIN, "workflow", "start", "waiter", "--wait", "20000", "--workflow-id", FIXED],
      { env },
    );
    // The command's start lands first (its Node start-up takes a moment).
    await until(
      "the command's start to land",
      async () => (await api("/workflows/describe", { workflow_id: FIXED })).status === 200,
    );
    await signal(FIXED, { via: "start" });
    const ended = JSON.parse((await started).stdout);
    assert.equal(ended.workflow_id, FIXED);
    assert.equal(ended.status, "Completed");
    assert.deepEqual(ended.output, { via: "start" });
    const history = skein(["workflow", "history", id, "--wait", "10"], env);
    assert.equal(history.status, 2);
    assert.match(history.stderr, /--wait goes with start and describe only/);
  });
});
