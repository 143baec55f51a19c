// The agent transport against hostile or broken peers, end to end: `skein serve` (SQLite), a
// real `skein worker agent` process serving namespace beta against the scripted model, and raw
// WebSockets holding worker tokens of namespace alpha. A message outside the protocol closes
// only its own socket with a named refusal; alpha cannot answer, announce or write anything
// of beta's; a socket closes when its token expires; an intervention answered StaleTarget
// (worker stopped with SIGSTOP) is never applied once the worker runs again.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import WebSocket from "ws";
import { type ScriptedModel, startScriptedModel } from "../../../src/testing/scripted-model.ts";
import { until } from "../../support/until.ts";
import {
  call,
  type ServerProcess,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";
import { ASK, spawnAgentWorker } from "./support.ts";

let dir: { path: string; remove: () => Promise<void> };
let server: ServerProcess;
let model: ScriptedModel;
let admin: string;
let alpha: string;
let worker: Awaited<ReturnType<typeof spawnAgentWorker>>;

interface Attempt {
  run_id: string;
  activity_id: number;
  attempt: number;
}

const api = (path: string, body: object, bearer = admin) =>
  call(server.url, "POST", path, { token: bearer, body });

async function start(namespace: string): Promise<string> {
  const r = await api("/workflows/start", { namespace, name: "ask", input: { q: "hi" } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.workflow_id;
}

async function liveAttempt(workflowId: string): Promise<Attempt> {
  return until(`a live attempt of ${workflowId}`, async () => {
    const r = await api("/workflows/attempts", { namespace: "beta", workflow_id: workflowId });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.attempts[0];
  });
}

const intervene = async (workflowId: string, a: Attempt, kind: object) => {
  const r = await api("/workflows/intervene", {
    namespace: "beta",
    workflow_id: workflowId,
    run_id: a.run_id,
    activity_id: a.activity_id,
    attempt: a.attempt,
    kind,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.outcome.outcome as string;
};

async function transcript(workflowId: string, a: Attempt): Promise<Record<string, unknown>[]> {
  const r = await api("/workflows/transcript", {
    namespace: "beta",
    workflow_id: workflowId,
    run_id: a.run_id,
    activity_id: a.activity_id,
    attempt: a.attempt,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.entries;
}

async function ended(namespace: string, workflowId: string) {
  return until(`${workflowId} to end`, async () => {
    const r = await api("/workflows/describe", { namespace, workflow_id: workflowId });
    return r.body.run.status === "Running" ? undefined : r.body.run;
  });
}

/** A WebSocket to the agent transport with `bearer`, open. */
async function socket(bearer: string): Promise<WebSocket> {
  const ws = new WebSocket(`${server.url.replace("http", "ws")}/agents/connect`, {
    headers: { authorization: `Bearer ${bearer}` },
  });
  await new Promise<void>((done, fail) => {
    ws.once("open", () => done());
    ws.once("error", fail);
  });
  return ws;
}

/** Resolves with the close code and reason, or undefined when the socket stays open `ms`. */
function closed(ws: WebSocket, ms = 10_000): Promise<{ code: number; reason: string } | undefined> {
  if (ws.readyState === WebSocket.CLOSED) return Promise.resolve({ code: -1, reason: "" });
  return new Promise((done) => {
    const timer = setTimeout(() => done(undefined), ms);
    ws.once("close", (code, reason) => {
      clearTimeout(timer);
      done({ code, reason: reason.toString() });
    });
  });
}

const send = (ws: WebSocket, message: unknown) => ws.send(JSON.stringify(message));

before(async () => {
  dir = await tempDir();
  model = await startScriptedModel();
  server = await startServe(await writeConfig(dir.path, '[namespaces]\ndefault = "default"'));
  admin = await tokenFor(dir.path, { subject: "operator", namespaces: "*" });
  alpha = await tokenFor(dir.path, { subject: "alpha", namespaces: ["alpha"], worker: true });
  for (const namespace of ["alpha", "beta"]) {
    const r = await api("/workflows/definitions", { namespace, definition: ASK });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  const beta = await tokenFor(dir.path, { subject: "beta", namespaces: ["beta"], worker: true });
  worker = await spawnAgentWorker({
    dir: dir.path,
    endpoint: server.grpc!,
    token: beta,
    actions: { assistant: { agent: { base_url: model.url, model: "scripted", max_turns: 5 } } },
    namespace: "beta",
  });
});

after(async () => {
  worker?.kill("SIGCONT");
  worker?.kill();
  await server?.stop();
  await model?.close();
  await dir?.remove();
});

async function health(): Promise<void> {
  const r = await fetch(`${server.url}/health`);
  assert.equal(r.status, 200);
}

describe("a message outside the protocol closes its socket, not the server", () => {
  const bad: [string, string | Buffer][] = [
    ["ended without ref", JSON.stringify({ type: "ended" })],
    ["null", "null"],
    ["transcript without ref", JSON.stringify({ type: "transcript" })],
    ["outcome with a made-up value", JSON.stringify({ type: "outcome", id: 1, outcome: "X" })],
    ["not JSON", "{nope"],
    ["deep nesting", `${"[".repeat(100_000)}${"]".repeat(100_000)}`],
    ["a binary frame", Buffer.from([0, 1, 2, 3])],
  ];
  for (const [name, message] of bad) {
    test(name, async () => {
      const ws = await socket(alpha);
      ws.send(message);
      const end = await closed(ws);
      assert.ok(end !== undefined, "the socket was closed");
      assert.ok([1003, 1008].includes(end.code), `close code ${end.code}`);
      assert.match(end.reason, /^invalid_message/);
      await health();
    });
  }

  test("live with capabilities 5 is refused; the attempts read answers normally", async () => {
    const id = await start("alpha");
    const ws = await socket(alpha);
    send(ws, {
      type: "live",
      ref: { run_id: "00000000-0000-4000-8000-000000000009", activity_id: 0, attempt: 1 },
      namespace: "alpha",
      workflow_id: id,
      session_id: "00000000-0000-4000-8000-000000000010",
      capabilities: 5,
    });
    const end = await closed(ws);
    // Before the fix the announcement was kept and both reads answered 500.
    const attempts = await api("/workflows/attempts", { namespace: "alpha", workflow_id: id });
    assert.equal(attempts.status, 200, JSON.stringify(attempts.body));
    const r = await api("/workflows/intervene", {
      namespace: "alpha",
      workflow_id: id,
      run_id: "00000000-0000-4000-8000-000000000009",
      activity_id: 0,
      attempt: 1,
      kind: { kind: "Cancel", reason: "x" },
    });
    assert.deepEqual([r.status, r.body], [200, { outcome: { outcome: "StaleTarget" } }]);
    assert.equal(end?.code, 1008);
    assert.match(end.reason, /^invalid_message: capabilities: /);
    await api("/workflows/cancel", { namespace: "alpha", workflow_id: id });
  });
});

describe("a worker of namespace alpha cannot reach beta's attempts", () => {
  test("no live announcement or transcript entry for beta's attempt", async () => {
    const seen = model.requests.length;
    model.push({ content: "beta done", delay_ms: 3_000 });
    const id = await start("beta");
    await until("the model call", async () => (model.requests.length > seen ? true : undefined));
    const a = await liveAttempt(id);
    const ws = await socket(alpha);
    for (const namespace of ["alpha", "beta"]) {
      send(ws, {
        type: "live",
        ref: { run_id: a.run_id, activity_id: a.activity_id, attempt: a.attempt },
        namespace,
        workflow_id: id,
        session_id: "00000000-0000-4000-8000-000000000011",
        capabilities: ["Cancel", "InjectMessage", "PauseResume", "UpdateBudget"],
      });
    }
    send(ws, {
      type: "transcript",
      ref: { run_id: a.run_id, activity_id: a.activity_id, attempt: a.attempt },
      entry: { type: "user_turn", text: "FORGED", source: "input" },
    });
    // A short window for the forged messages to reach the hub (the socket may or may not be
    // closed for them); the checks below run after the run has ended, seconds later, so a
    // loaded machine cannot make them pass or fail by timing.
    await closed(ws, 300);
    // Beta's own worker still owns it: an intervention reaches it.
    assert.equal(await intervene(id, a, { kind: "PauseResume", paused: false }), "Applied");
    assert.equal((await ended("beta", id)).output, "beta done");
    const entries = await transcript(id, a);
    assert.ok(!JSON.stringify(entries).includes("FORGED"), JSON.stringify(entries));
    ws.terminate();
  });

  test("answers from another socket never settle beta's interventions", async () => {
    model.push({ content: "after the stop", delay_ms: 1_000 });
    const seen = model.requests.length;
    const id = await start("beta");
    await until("the model call", async () => (model.requests.length > seen ? true : undefined));
    const a = await liveAttempt(id);
    worker.kill("SIGSTOP");
    try {
      const answers = Array.from({ length: 20 }, () =>
        intervene(id, a, { kind: "PauseResume", paused: true }),
      );
      // Alpha answers every id it could guess, in every form.
      const spoofers = await Promise.all([socket(alpha), socket(alpha)]);
      for (let n = 0; n < 200; n++) {
        for (const ws of spoofers) {
          if (ws.readyState !== WebSocket.OPEN) continue;
          send(ws, { type: "outcome", id: n, outcome: "Applied" });
          send(ws, { type: "ready", id: n });
        }
      }
      assert.deepEqual(await Promise.all(answers), Array(20).fill("StaleTarget"));
      for (const ws of spoofers) ws.terminate();
    } finally {
      worker.kill("SIGCONT");
    }
    // Told StaleTarget, never applied: the run was not paused and ends with the model's answer.
    assert.equal((await ended("beta", id)).output, "after the stop");
    const controls = (await transcript(id, a)).filter((e) => e.type === "control");
    assert.deepEqual(controls, []);
  });
});

describe("an intervention answered StaleTarget is never applied later", () => {
  test("Cancel to a stopped worker: StaleTarget, and the run completes after SIGCONT", async () => {
    model.push({ content: "not cancelled", delay_ms: 1_000 });
    const seen = model.requests.length;
    const id = await start("beta");
    await until("the model call", async () => (model.requests.length > seen ? true : undefined));
    const a = await liveAttempt(id);
    worker.kill("SIGSTOP");
    let outcome: string;
    try {
      outcome = await intervene(id, a, { kind: "Cancel", reason: "late" });
    } finally {
      worker.kill("SIGCONT");
    }
    assert.equal(outcome, "StaleTarget");
    const run = await ended("beta", id);
    assert.equal(run.status, "Completed", JSON.stringify(run));
    assert.equal(run.output, "not cancelled");
    assert.deepEqual(
      (await transcript(id, a)).filter((e) => e.type === "control"),
      [],
    );
  });

  test("an applied Cancel fails the run with `cancelled: REASON`, the prefix once", async () => {
    model.push({ content: "never", delay_ms: 60_000 });
    const seen = model.requests.length;
    const id = await start("beta");
    await until("the model call", async () => (model.requests.length > seen ? true : undefined));
    const a = await liveAttempt(id);
    assert.equal(await intervene(id, a, { kind: "Cancel", reason: "late" }), "Applied");
    const run = await ended("beta", id);
    assert.equal(run.status, "Failed");
    assert.match(run.failure.message, /: cancelled: late$/);
    assert.doesNotMatch(run.failure.message, /cancelled: cancelled/);
  });
});

describe("an agent socket closes when its token expires", () => {
  test("a 5 s token: the socket is closed with token_expired", async () => {
    // Whole seconds from the current one: valid for 4 to 5 s, time enough for the upgrade
    // on a loaded machine (a 2 s token could expire before the socket opened).
    const short = await tokenFor(dir.path, {
      subject: "short",
      namespaces: ["alpha"],
      worker: true,
      ttlSeconds: 5,
    });
    const ws = await socket(short);
    const end = await closed(ws, 20_000);
    assert.deepEqual(end, { code: 1008, reason: "token_expired" });
  });
});
