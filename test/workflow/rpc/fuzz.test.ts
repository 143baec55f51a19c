// Fuzzing the worker stream of a real `skein serve`: thousands of random and mutated
// messages over real gRPC streams (valid protobuf with garbage field values, frames out of
// order, results for attempts nobody holds, repeated hellos, empty batches, strings of
// megabytes, raw bytes that are not protobuf at all). Afterwards the server still answers
// /health and a normal worker still completes a workflow. The PRNG is seeded; the seed is
// printed, and FUZZ_SEED replays a run.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { workerService } from "../../../src/protocol/worker-stream/index.ts";
import { hello, openRaw, type StreamEnd } from "../../support/raw-worker.ts";
import { moduleWorker } from "../../support/worker-endpoint.ts";
import { adminToken, call, startServe, tempDir, writeConfig } from "../support/server.ts";

const STREAMS = 240;
const PARALLEL = 12;
const MAX_MESSAGES_PER_STREAM = 24;

/** mulberry32: small, fast, and the same sequence for the same seed. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick, chance: (p: number) => next() < p };
}
type Rng = ReturnType<typeof prng>;

const serialize = (message: object) =>
  (workerService.Connect as grpc.MethodDefinition<unknown, unknown>).requestSerialize(
    message,
  ) as Buffer;

function garbageString(r: Rng): string {
  switch (r.int(9)) {
    case 0:
      return "";
    case 1:
      return "\u0000";
    case 2:
      return "a\nb\u202E\u0007";
    case 3:
      return randomUUID();
    case 4:
      return "x".repeat(r.int(5000));
    case 5:
      return "{not json";
    case 6:
      return "😀".repeat(r.int(100));
    case 7:
      return JSON.stringify({ n: r.int(1000) });
    default:
      return String.fromCharCode(...Array.from({ length: r.int(40) }, () => r.int(0x10000)));
  }
}

function garbageNumber(r: Rng): number {
  return r.pick([0, 1, 2, 7, 4096, 4097, 65_535, 2 ** 31, 2 ** 32 - 1]);
}

function garbageRef(r: Rng): object | null | undefined {
  if (r.chance(0.15)) return r.pick([null, undefined]);
  return {
    run_id: r.chance(0.6) ? randomUUID() : garbageString(r),
    activity_id: garbageNumber(r),
    attempt: garbageNumber(r),
  };
}

function garbageHello(r: Rng): object {
  const fields: Record<string, unknown> = {};
  for (const key of ["name", "kind", "namespace", "task_queue", "deployment", "instance_id"]) {
    if (r.chance(0.3)) fields[key] = garbageString(r);
  }
  if (r.chance(0.3)) fields.concurrency = garbageNumber(r);
  if (r.chance(0.3)) {
    fields.actions = Array.from({ length: r.int(20) }, () => ({
      action: garbageString(r),
      capabilities: Array.from({ length: r.int(20) }, () => garbageString(r)),
    }));
  }
  if (r.chance(0.4)) {
    fields.running = Array.from({ length: r.int(30) }, () => ({
      ref: garbageRef(r),
      action: r.chance(0.5) ? "add" : garbageString(r),
    }));
  }
  return hello(fields);
}

function garbageFrame(r: Rng): object {
  switch (r.int(6)) {
    case 0:
      return {};
    case 1:
      return garbageHello(r);
    case 2:
      return { heartbeat: { ref: garbageRef(r), details_json: garbageString(r) } };
    case 3:
      return { completion: { ref: garbageRef(r), output_json: garbageString(r) } };
    case 4:
      return {
        failure: {
          ref: garbageRef(r),
          code: garbageString(r),
          message: garbageString(r),
          non_retryable: r.chance(0.5),
        },
      };
    default:
      return { heartbeat: {} };
  }
}

function mutate(r: Rng, bytes: Buffer): Buffer {
  const out = Buffer.from(bytes);
  switch (r.int(4)) {
    case 0:
      return out.subarray(0, r.int(out.length + 1));
    case 1:
      for (let i = 0; i < 1 + r.int(8) && out.length > 0; i++) out[r.int(out.length)] = r.int(256);
      return out;
    case 2:
      return Buffer.concat([out, Buffer.from(Array.from({ length: r.int(64) }, () => r.int(256)))]);
    default:
      return Buffer.from(Array.from({ length: r.int(200) }, () => r.int(256)));
  }
}

/** One message: a batch object, or bytes (a mutated batch, or a huge one). */
function garbageMessage(r: Rng): object | Buffer {
  const roll = r.int(100);
  if (roll < 5) return { frames: [] };
  if (roll < 7) {
    // A string of megabytes within the gRPC bound; one message in a few hundred is past it.
    const size = r.chance(0.9) ? 4 * 1024 * 1024 : 20 * 1024 * 1024;
    return { frames: [{ completion: { ref: garbageRef(r), output_json: "x".repeat(size) } }] };
  }
  const batch = { frames: Array.from({ length: 1 + r.int(6) }, () => garbageFrame(r)) };
  if (roll < 40) return mutate(r, serialize(batch));
  return batch;
}

/**
 * Every WAITED-th stream waits for its end up to this long instead of the short window, so
 * the run sees how streams end even on a machine too loaded to end one within 150 ms.
 */
const WAITED = 16;
const WAITED_MS = 15_000;

async function fuzzStream(
  r: Rng,
  address: string,
  token: string,
  windowMs: number,
): Promise<StreamEnd | "open"> {
  const s = openRaw(address, r.chance(0.9) ? token : r.pick([undefined, "not-a-token"]));
  if (r.chance(0.6)) s.send({ frames: [hello({ concurrency: 1 + r.int(4) })] });
  const messages = 1 + r.int(MAX_MESSAGES_PER_STREAM);
  for (let i = 0; i < messages; i++) s.send(garbageMessage(r));
  // A stream not ended within the window counts as "open": that is an outcome, not a wait
  // for one (a loaded machine only counts more streams open; the checks allow any).
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    s.ended,
    new Promise<"open">((done) => {
      timer = setTimeout(() => done("open"), windowMs);
    }),
  ]);
  clearTimeout(timer);
  s.close();
  await s.ended;
  return outcome;
}

test("the worker stream survives thousands of random and mutated messages", async (t) => {
  const seed = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
  t.diagnostic(`FUZZ_SEED=${seed}`);
  console.log(`worker stream fuzz: FUZZ_SEED=${seed}`);
  const r = prng(seed);
  const dir = await tempDir();
  t.after(dir.remove);
  const server = await startServe(await writeConfig(dir.path, '[namespaces]\ndefault = "default"'));
  t.after(() => server.stop());
  const token = await adminToken(dir.path);

  const ends: (StreamEnd | "open")[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < STREAMS) {
        const window = next % WAITED === 0 ? WAITED_MS : 150;
        next++;
        ends.push(await fuzzStream(r, server.grpc!, token, window));
      }
    }),
  );
  // Every refusal is one of the protocol's, never an internal error of the server.
  const codes = new Set(ends.map((e) => (e === "open" ? "open" : grpc.status[e.code])));
  for (const e of ends) {
    if (e === "open") continue;
    assert.ok(
      ![grpc.status.INTERNAL, grpc.status.UNKNOWN].includes(e.code),
      `seed ${seed}: a stream ended ${grpc.status[e.code]}: ${e.details}`,
    );
  }
  t.diagnostic(`stream ends: ${[...codes].join(", ")}`);
  assert.ok(codes.has("INVALID_ARGUMENT"), `seed ${seed}: some messages were refused`);

  const health = await call(server.url, "GET", "/health");
  assert.equal(health.status, 200);
  const api = (path: string, body: object) => call(server.url, "POST", path, { token, body });
  const definition = `name: sum
task_queue: q
steps:
  - { id: a, call: { action: add, input: "{ 'a': input.a, 'b': 2 }" } }
output: steps.a.sum
`;
  assert.equal((await api("/workflows/definitions", { definition })).status, 200);
  const worker = await moduleWorker(dir.path, { endpoint: server.grpc!, token, actions: ["add"] });
  t.after(() => worker.kill());
  const workflowId = randomUUID();
  const started = await api("/workflows/start", {
    name: "sum",
    workflow_id: workflowId,
    input: { a: 40 },
  });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const run = (await api("/workflows/describe", { workflow_id: workflowId, wait_ms: 30_000 })).body
    .run;
  assert.equal(run.status, "Completed", `seed ${seed}: ${JSON.stringify(run)}`);
  assert.equal(run.output, 42);
});
