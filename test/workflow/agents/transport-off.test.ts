// A server with `agents.transport = false`: the WebSocket endpoint is not offered, so an agent
// worker serves over gRPC only and every intervention on its live attempt is StaleTarget.
// Also the transport's own admission: no bearer (401) and a bearer without the worker grant
// (403) on a server that offers it.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import WebSocket from "ws";
import { type ScriptedModel, startScriptedModel } from "../../../src/testing/scripted-model.ts";
import { until } from "../../support/until.ts";
import { spawnWorker, writeJson } from "../../support/worker-endpoint.ts";
import {
  call,
  type ServerProcess,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";

let dir: { path: string; remove: () => Promise<void> };
let off: ServerProcess;
let on: ServerProcess;
let model: ScriptedModel;
let token: string;
let worker: ReturnType<typeof spawnWorker>;

before(async () => {
  dir = await tempDir();
  model = await startScriptedModel();
  const offDir = join(dir.path, "off");
  const onDir = join(dir.path, "on");
  const { mkdir } = await import("node:fs/promises");
  await mkdir(offDir);
  await mkdir(onDir);
  [off, on] = await Promise.all([
    startServe(
      await writeConfig(offDir, '[namespaces]\ndefault = "default"\n[agents]\ntransport = false'),
    ),
    startServe(await writeConfig(onDir, '[namespaces]\ndefault = "default"')),
  ]);
  token = await tokenFor(offDir, { subject: "operator", namespaces: "*", worker: true });
  const r = await call(off.url, "POST", "/workflows/definitions", {
    token,
    body: {
      definition:
        "name: ask\ntask_queue: agents\nretry: { max_attempts: 1 }\nsteps:\n  - { id: a, call: { action: assistant, input: input.q } }\noutput: steps.a\n",
    },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const tokenFile = join(offDir, "worker.token");
  await writeFile(tokenFile, `${token}\n`);
  const doc = await writeJson(offDir, "agents.json", {
    name: "agents",
    task_queue: "agents",
    actions: { assistant: { agent: { base_url: model.url, model: "scripted" } } },
  });
  worker = spawnWorker(["agent", doc, "--endpoint", off.grpc!, "--token-file", tokenFile]);
});

after(async () => {
  worker?.kill();
  await Promise.all([off?.stop(), on?.stop()]);
  await model?.close();
  await dir?.remove();
});

/** The HTTP status the server answers a WebSocket upgrade with. */
function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((done) => {
    const ws = new WebSocket(`${url.replace("http", "ws")}/agents/connect`, { headers });
    ws.on("open", () => {
      ws.close();
      done(101);
    });
    ws.on("unexpected-response", (_req, res) => done(res.statusCode ?? 0));
    ws.on("error", () => undefined);
  });
}

describe("agent transport switched off", () => {
  test("every kind is StaleTarget for a live agent attempt", async () => {
    model.push({ content: "late", delay_ms: 1500 });
    const started = await call(off.url, "POST", "/workflows/start", {
      token,
      body: { name: "ask", input: { q: "hi" } },
    });
    const id = started.body.workflow_id;
    await until("the model call", async () => (model.requests.length > 0 ? true : undefined));
    const a = await until("the live attempt", async () => {
      const r = await call(off.url, "POST", "/workflows/attempts", {
        token,
        body: { workflow_id: id },
      });
      return r.body.attempts[0];
    });
    // Listed from the gRPC side only.
    assert.deepEqual(a.capabilities, ["Cancel"]);
    for (const kind of [
      { kind: "Cancel", reason: "x" },
      { kind: "InjectMessage", text: "t", priority: { priority: "Interrupt" } },
      { kind: "PauseResume", paused: true },
      { kind: "UpdateBudget", max_tokens: null, max_turns: 1 },
      { kind: "RespondToApproval", call_id: "c", decision: { decision: "Deny" }, note: null },
    ]) {
      const r = await call(off.url, "POST", "/workflows/intervene", {
        token,
        body: {
          workflow_id: id,
          run_id: a.run_id,
          activity_id: a.activity_id,
          attempt: a.attempt,
          kind,
        },
      });
      assert.deepEqual([r.status, r.body], [200, { outcome: { outcome: "StaleTarget" } }]);
    }
  });

  test("the upgrade is not offered", async () => {
    assert.equal(await upgradeStatus(off.url, { authorization: `Bearer ${token}` }), 404);
  });
});

describe("agent transport admission", () => {
  test("a worker-granted bearer connects", async () => {
    const ok = await tokenFor(join(dir.path, "on"), { namespaces: "*", worker: true });
    assert.equal(await upgradeStatus(on.url, { authorization: `Bearer ${ok}` }), 101);
  });
  test("no bearer is 401", async () => {
    assert.equal(await upgradeStatus(on.url, {}), 401);
  });
  test("a bad bearer is 401", async () => {
    assert.equal(await upgradeStatus(on.url, { authorization: "Bearer nonsense" }), 401);
  });
  test("a bearer without the worker grant is 403", async () => {
    const plain = await tokenFor(join(dir.path, "on"), { namespaces: "*" });
    assert.equal(await upgradeStatus(on.url, { authorization: `Bearer ${plain}` }), 403);
  });
});
