// Fuzzing the agent transport: thousands of random and mutated worker messages (random JSON,
// valid messages with fields dropped, retyped, made huge or nested deep, an unknown type, text
// that is not JSON, binary frames) over real WebSockets against a real `skein serve`, from
// worker tokens with no namespace and with every namespace. Afterwards the server still answers
// /health, a module worker still completes activities, and the real agent worker still owns its
// live attempt (an intervention reaches it). The PRNG is seeded: set SKEIN_FUZZ_SEED to replay
// a run; the seed in use is printed.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import WebSocket from "ws";
import { type ScriptedModel, startScriptedModel } from "../../../src/testing/scripted-model.ts";
import { until } from "../../support/until.ts";
import { ACTIVITIES, spawnWorker, writeJson } from "../../support/worker-endpoint.ts";
import {
  call,
  type ServerProcess,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";

const MESSAGES = 3_000;
const LANES = 8;
const SEED = Number(process.env.SKEIN_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 32));

/** mulberry32: small, seeded, good enough to pick mutations. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = prng(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const int = (n: number) => Math.floor(random() * n);

let dir: { path: string; remove: () => Promise<void> };
let server: ServerProcess;
let model: ScriptedModel;
let admin: string;
const workers: ReturnType<typeof spawnWorker>[] = [];

const api = (path: string, body: object) => call(server.url, "POST", path, { token: admin, body });

before(async () => {
  dir = await tempDir();
  model = await startScriptedModel();
  server = await startServe(await writeConfig(dir.path, '[namespaces]\ndefault = "default"'));
  admin = await tokenFor(dir.path, { subject: "operator", namespaces: "*", worker: true });
  for (const definition of [
    "name: ask\ntask_queue: agents\nretry: { max_attempts: 1 }\nsteps:\n  - { id: a, call: { action: assistant, input: input.q } }\noutput: steps.a\n",
    "name: plain\ntask_queue: plain\nsteps:\n  - { id: a, call: { action: inc, input: input } }\noutput: steps.a\n",
  ]) {
    const r = await api("/workflows/definitions", { definition });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  const tokenFile = join(dir.path, "worker.token");
  await writeFile(tokenFile, `${admin}\n`, { mode: 0o600 });
  const common = ["--endpoint", server.grpc!, "--token-file", tokenFile];
  const agents = await writeJson(dir.path, "agents.json", {
    name: "agents",
    task_queue: "agents",
    actions: { assistant: { agent: { base_url: model.url, model: "scripted", max_turns: 5 } } },
  });
  const plain = await writeJson(dir.path, "plain.json", {
    name: "plain",
    task_queue: "plain",
    actions: { inc: { module: ACTIVITIES, export: "inc" } },
  });
  workers.push(spawnWorker(["agent", agents, ...common]));
  workers.push(spawnWorker(["module", plain, ...common]));
});

after(async () => {
  for (const w of workers) w.kill();
  await server?.stop();
  await model?.close();
  await dir?.remove();
});

interface Ref {
  run_id: string;
  activity_id: number;
  attempt: number;
}

/** Valid messages of every type, about a real live attempt. */
function templates(ref: Ref, workflowId: string): Record<string, unknown>[] {
  const control = {
    kind: { kind: "UpdateBudget", max_tokens: 10, max_turns: null },
    subject: "x",
    at: "2024-01-01T00:00:00Z",
  };
  return [
    {
      type: "live",
      ref,
      namespace: "default",
      workflow_id: workflowId,
      session_id: "00000000-0000-4000-8000-000000000001",
      capabilities: ["Cancel", "PauseResume"],
    },
    { type: "ended", ref },
    { type: "transcript", ref, entry: { type: "user_turn", text: "t", source: "input" } },
    {
      type: "transcript",
      ref,
      entry: { type: "model_turn", content: null, tool_calls: [{ id: "c" }], tokens: 3 },
    },
    { type: "transcript", ref, entry: { type: "control", control } },
    { type: "transcript", ref, entry: { type: "end", reason: "max_turns", turns: 1 } },
    { type: "ready", id: "00000000-0000-4000-8000-000000000002" },
    { type: "outcome", id: "00000000-0000-4000-8000-000000000003", outcome: "StaleTarget" },
  ];
}

function randomString(): string {
  const alphabet = ["a", "Z", "0", " ", '"', "\\", "\u0000", "é", "\u{1F600}", "{", "]"];
  return Array.from({ length: int(12) }, () => pick(alphabet)).join("");
}

function randomJson(depth = 0): unknown {
  const choice = int(depth > 3 ? 6 : 8);
  switch (choice) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return pick([0, -1, 1.5, 2 ** 53 + 1, -(2 ** 63), 1e308, 4294967296, int(1000)]);
    case 3:
    case 4:
      return randomString();
    case 5:
      return pick(["live", "ended", "transcript", "ready", "outcome", "control", "commit"]);
    case 6:
      return Array.from({ length: int(4) }, () => randomJson(depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: int(4) }, () => [
          pick(["type", "ref", "id", "entry", "run_id", randomString()]),
          randomJson(depth + 1),
        ]),
      );
  }
}

function deep(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = random() < 0.5 ? [value] : { a: value };
  return value;
}

/** Replaces, drops or adds one field somewhere in `value`. */
function mutate(value: unknown): unknown {
  if (typeof value !== "object" || value === null || random() < 0.25) {
    return pick<() => unknown>([
      () => randomJson(),
      () => pick(["1e400", 18446744073709551616n, -1, 1.5]),
      () => deep(1 + int(200)),
      () => "x".repeat(int(100_000)),
    ])();
  }
  const copy: Record<string, unknown> = Array.isArray(value)
    ? ({ ...value } as Record<string, unknown>)
    : { ...(value as Record<string, unknown>) };
  const keys = Object.keys(copy);
  const key = keys.length === 0 ? randomString() : pick(keys);
  const roll = random();
  if (roll < 0.2) delete copy[key];
  else if (roll < 0.3) copy[randomString()] = randomJson();
  else copy[key] = mutate(copy[key]);
  return Array.isArray(value) ? Object.values(copy) : copy;
}

function encode(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? Number(v) : v)) ?? "null";
}

function frame(valid: readonly Record<string, unknown>[]): string | Buffer {
  const roll = random();
  if (roll < 0.1) return encode(randomJson());
  if (roll < 0.15) return encode(pick(valid));
  if (roll < 0.2) {
    const text = encode(pick(valid));
    return text.slice(0, int(text.length));
  }
  if (roll < 0.25) return Buffer.from(Array.from({ length: int(64) }, () => int(256)));
  if (roll < 0.28) {
    const n = 30 + int(50_000);
    return "[".repeat(n) + "]".repeat(random() < 0.5 ? n : int(n));
  }
  return encode(mutate(pick(valid)));
}

function open(token: string): Promise<WebSocket> {
  const ws = new WebSocket(`${server.url.replace("http", "ws")}/agents/connect`, {
    headers: { authorization: `Bearer ${token}` },
  });
  ws.on("error", () => {});
  return new Promise((done, fail) => {
    ws.once("open", () => done(ws));
    ws.once("error", fail);
    ws.once("unexpected-response", (_q, r) => fail(new Error(`upgrade answered ${r.statusCode}`)));
  });
}

/** Sends one frame and waits until the server read it: a pong after it, or the close. */
function exchange(ws: WebSocket, data: string | Buffer): Promise<void> {
  return new Promise((done) => {
    const finish = () => {
      ws.off("pong", finish);
      ws.off("close", finish);
      done();
    };
    ws.once("pong", finish);
    ws.once("close", finish);
    ws.send(data, { binary: Buffer.isBuffer(data) });
    ws.ping();
  });
}

test(`the agent transport survives ${MESSAGES} hostile messages (seed ${SEED})`, async (t) => {
  t.diagnostic(`SKEIN_FUZZ_SEED=${SEED}`);
  console.log(`agent transport fuzz: SKEIN_FUZZ_SEED=${SEED}`);
  // A real agent attempt stays live throughout; the fuzz aims at it.
  model.push({ content: "too late", delay_ms: 600_000 }, { content: "steered" });
  const started = await api("/workflows/start", { name: "ask", input: { q: "hi" } });
  const id: string = started.body.workflow_id;
  const attempt: Ref = await until("the live attempt", async () => {
    const r = await api("/workflows/attempts", { workflow_id: id });
    return r.body.attempts?.[0];
  });
  const ref = {
    run_id: attempt.run_id,
    activity_id: attempt.activity_id,
    attempt: attempt.attempt,
  };
  const valid = templates(ref, id);
  const tokens = [
    admin,
    await tokenFor(dir.path, { subject: "nobody", namespaces: [], worker: true }),
  ];
  let refused = 0;
  const began = Date.now();
  await Promise.all(
    Array.from({ length: LANES }, async (_, lane) => {
      const token = tokens[lane % tokens.length]!;
      let ws = await open(token);
      for (let i = lane; i < MESSAGES; i += LANES) {
        if (ws.readyState !== WebSocket.OPEN) {
          refused++;
          ws = await open(token);
        }
        await exchange(ws, frame(valid));
      }
      ws.terminate();
    }),
  );
  t.diagnostic(`${refused} sockets closed by refusals in ${Date.now() - began} ms`);
  assert.ok(refused > MESSAGES / 4, `only ${refused} refusals`);

  assert.equal(server.child.exitCode, null, server.stderr());
  assert.equal((await fetch(`${server.url}/health`)).status, 200);
  // A module worker still completes activities.
  const plain = await api("/workflows/start", { name: "plain", input: { n: 1 } });
  const done = await until("the plain run", async () => {
    const r = await api("/workflows/describe", { workflow_id: plain.body.workflow_id });
    return r.body.run.status === "Running" ? undefined : r.body.run;
  });
  assert.deepEqual([done.status, done.output], ["Completed", { n: 2 }], JSON.stringify(done));
  // The agent worker still owns its attempt: an intervention reaches it and steers the run.
  const r = await api("/workflows/intervene", {
    workflow_id: id,
    ...ref,
    kind: { kind: "InjectMessage", text: "now", priority: { priority: "Interrupt" } },
  });
  assert.deepEqual(r.body, { outcome: { outcome: "Applied" } });
  const run = await until("the agent run", async () => {
    const d = await api("/workflows/describe", { workflow_id: id });
    return d.body.run.status === "Running" ? undefined : d.body.run;
  });
  assert.equal(run.output, "steered");
});
