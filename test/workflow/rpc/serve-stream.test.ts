// The worker stream of a real `skein serve`, played by raw gRPC clients: a worker of one
// namespace cannot re-attach (and so cannot settle) another namespace's attempt, and output
// that is not JSON fails the attempt with `bad_output` (retried by its policy) instead of
// leaving the run stuck.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { MAX_JSON_DEPTH } from "../../../src/common/decode/sources.ts";
import type { AttemptRef, ServerFrame } from "../../../src/protocol/worker-stream/index.ts";
import { completion, hello, isWelcome, openRaw, type RawStream } from "../../support/raw-worker.ts";
import {
  adminToken,
  call,
  type ServerProcess,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";

const JOB = `name: job
task_queue: q
retry: { max_attempts: 3, initial_backoff_ms: 1 }
steps:
  - { id: a, call: { action: act, input: "input" } }
output: steps.a
`;

let dir: Awaited<ReturnType<typeof tempDir>>;
let server: ServerProcess;
let admin: string;
const api = (path: string, body: object, token = admin) =>
  call(server.url, "POST", path, { token, body });

before(async () => {
  dir = await tempDir();
  server = await startServe(await writeConfig(dir.path, '[namespaces]\ndefault = "default"'));
  admin = await adminToken(dir.path);
  for (const namespace of ["default", "beta"]) {
    const r = await api("/workflows/definitions", { namespace, definition: JOB });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
});

after(async () => {
  await server.stop();
  await dir.remove();
});

async function start(namespace: string): Promise<string> {
  const workflowId = randomUUID();
  const r = await api("/workflows/start", { namespace, name: "job", workflow_id: workflowId });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return workflowId;
}

const describeRun = (namespace: string, workflowId: string, waitMs = 0) =>
  api("/workflows/describe", { namespace, workflow_id: workflowId, wait_ms: waitMs });

/** A raw worker of `namespace`, welcomed; `running` lists attempts it claims to hold. */
async function worker(namespace: string, token: string, running: AttemptRef[] = []) {
  const s = openRaw(server.grpc!, token);
  s.send({
    frames: [
      hello({
        namespace,
        actions: [{ action: "act", capabilities: [] }],
        running: running.map((ref) => ({ ref, action: "act" })),
      }),
    ],
  });
  return s;
}

const taskFor = (s: RawStream, attempt: number) =>
  s.until((f) => f.frame === "task" && f.task.ref.attempt === attempt, `attempt ${attempt}`);
const refOf = (f: ServerFrame) => (f.frame === "task" ? f.task.ref : assert.fail("not a task"));

describe("namespaces on the worker stream", () => {
  test("a worker of alpha cannot re-attach or settle beta's attempt", async () => {
    const alpha = await tokenFor(dir.path, { subject: "a", namespaces: ["alpha"], worker: true });
    const workflowId = await start("beta");
    const b = await worker("beta", admin);
    const ref = refOf(await taskFor(b, 1));
    // Beta's worker goes away: its attempt is detached, waiting for it to come back.
    b.close();
    await b.ended;

    const forger = await worker("alpha", alpha, [ref]);
    const end = await forger.ended;
    assert.equal(end.code, grpc.status.PERMISSION_DENIED);
    assert.match(end.details, /^reattach_refused: hello\.running\[0\]/);
    // Nor can a welcomed alpha session settle it without listing it.
    const other = await worker("alpha", alpha);
    await other.until(isWelcome, "alpha's welcome");
    other.send({ frames: [completion(ref, '"forged"')] });
    await other.until((f) => f.frame === "ack", "the ack of the dropped result");
    other.close();
    assert.equal((await describeRun("beta", workflowId)).body.run.status, "Running");

    // Beta's own worker re-attaches it and its result ends the run.
    const b2 = await worker("beta", admin, [ref]);
    await b2.until(isWelcome, "beta's welcome");
    b2.send({ frames: [completion(ref, '"genuine"')] });
    const run = (await describeRun("beta", workflowId, 30_000)).body.run;
    b2.close();
    assert.equal(run.status, "Completed");
    assert.equal(run.output, "genuine");
  });
});

describe("output that is not JSON", () => {
  test("fails the attempt with bad_output; the retry completes the run", async () => {
    const workflowId = await start("default");
    const w = await worker("default", admin);
    try {
      const first = refOf(await taskFor(w, 1));
      // Heartbeat details are opaque to the server, JSON or not.
      w.send({ frames: [{ heartbeat: { ref: first, details_json: "{not json" } }] });
      w.send({ frames: [completion(first, "not json")] });
      const second = refOf(await taskFor(w, 2));
      w.send({ frames: [completion(second, '{"ok":true}')] });
      const run = (await describeRun("default", workflowId, 30_000)).body.run;
      assert.equal(run.status, "Completed", JSON.stringify(run));
      assert.deepEqual(run.output, { ok: true });
      const history = await api("/workflows/history", { workflow_id: workflowId });
      const failed = history.body.events.filter(
        (e: { type: string }) => e.type === "ActivityFailed",
      );
      assert.deepEqual(
        failed.map((e: { attempt: number; code: string }) => [e.attempt, e.code]),
        [[1, "bad_output"]],
      );
    } finally {
      w.close();
    }
  });

  test("output nested deeper than the JSON depth bound fails with bad_output; describe still reads the run", async () => {
    const workflowId = await start("default");
    const w = await worker("default", admin);
    try {
      const deep = `${"[".repeat(MAX_JSON_DEPTH + 1)}${"]".repeat(MAX_JSON_DEPTH + 1)}`;
      w.send({ frames: [completion(refOf(await taskFor(w, 1)), deep)] });
      w.send({ frames: [completion(refOf(await taskFor(w, 2)), "[[1]]")] });
      const run = (await describeRun("default", workflowId, 30_000)).body.run;
      assert.equal(run.status, "Completed", JSON.stringify(run));
      assert.deepEqual(run.output, [[1]]);
      const history = await api("/workflows/history", { workflow_id: workflowId });
      assert.equal(history.status, 200, JSON.stringify(history.body));
      const failed = history.body.events.filter(
        (e: { type: string }) => e.type === "ActivityFailed",
      );
      assert.deepEqual(
        failed.map((e: { attempt: number; code: string }) => [e.attempt, e.code]),
        [[1, "bad_output"]],
      );
    } finally {
      w.close();
    }
  });

  test("a run whose attempts answer non-JSON output is never stuck: cancel ends it", async () => {
    const workflowId = await start("default");
    const w = await worker("default", admin);
    try {
      for (const attempt of [1, 2]) {
        w.send({ frames: [completion(refOf(await taskFor(w, attempt)), "<html>")] });
      }
      await taskFor(w, 3);
      const cancel = await api("/workflows/cancel", { workflow_id: workflowId });
      assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
      const run = (await describeRun("default", workflowId, 30_000)).body.run;
      assert.equal(run.status, "Cancelled");
    } finally {
      w.close();
    }
  });
});
