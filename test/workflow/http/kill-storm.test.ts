// Many runs through repeated SIGKILLs of the real server: 30 runs, each a call, a collect
// of 8 members through the outbox and a call on their sum, with `skein serve` killed three
// times while they run and restarted on the same data. Every acknowledged run completes
// with the exact output its input determines, and every activity is completed once in its
// history (no step lost, none recorded twice), whatever the engine had sent ahead of its
// commits when the kill came.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { freePort, moduleWorker } from "../../support/worker-endpoint.ts";
import {
  adminToken,
  call,
  type ServerProcess,
  startServe,
  tempDir,
  writeConfig,
} from "../support/server.ts";

const RUNS = 30;
const KILLS = 3;
const MIX = `name: mix
task_queue: q
steps:
  - { id: a, call: { action: slowInc, input: "{ 'n': input.n, 'ms': 15 }" } }
  - id: b
    collect:
      items: "[1, 2, 3, 4, 5, 6, 7, 8]"
      step: { id: one, call: { action: slowInc, input: "{ 'n': item + steps.a.n, 'ms': 15 }" } }
  - { id: c, call: { action: slowInc, input: "{ 'n': $sum(steps.b.n), 'ms': 15 }" } }
output: steps.c.n
`;
/** a = n + 1; member i = i + a + 1; c = their sum + 1. */
const expected = (n: number) => 8 * n + 53;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

test("runs survive repeated SIGKILLs of the server: exact outputs, each activity once", async (t) => {
  const dir = await tempDir();
  t.after(dir.remove);
  const config = await writeConfig(
    dir.path,
    '[namespaces]\ndefault = "default"\nmax_in_flight_activities = 16\n[outbox]\nenabled = true',
  );
  const grpc = ["--grpc-listen", `127.0.0.1:${await freePort()}`];
  let server: ServerProcess = await startServe(config, grpc);
  t.after(() => server.stop());
  const token = await adminToken(dir.path);
  const api = (path: string, body: object) => call(server.url, "POST", path, { token, body });
  assert.equal((await api("/workflows/definitions", { definition: MIX })).status, 200);
  const worker = await moduleWorker(dir.path, {
    endpoint: grpc[1]!,
    token,
    actions: ["slowInc"],
    args: ["--concurrency", "8"],
  });
  t.after(() => worker.kill());

  const runs = Array.from({ length: RUNS }, (_, n) => ({ n, id: randomUUID() }));
  for (const { n, id } of runs) {
    const r = await api("/workflows/start", { name: "mix", workflow_id: id, input: { n } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  const runningAtKill: number[] = [];
  for (let kill = 0; kill < KILLS; kill++) {
    // Time passes on purpose: work goes on between kills (how much does not matter).
    await sleep(150 + kill * 50);
    const running = await api("/workflows/list", { status: "Running", limit: RUNS });
    runningAtKill.push(running.body.runs.length);
    await server.stop("SIGKILL");
    server = await startServe(config, grpc);
  }
  // The kills came while work was under way (at least the first one).
  assert.ok(runningAtKill[0]! > 0, `runs running at each kill: ${runningAtKill}`);

  for (const { n, id } of runs) {
    const r = await api("/workflows/describe", { workflow_id: id, wait_ms: 60_000 });
    assert.equal(r.body.run.status, "Completed", `run ${n}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.run.output, expected(n), `run ${n}`);
    const events = (await api("/workflows/history", { workflow_id: id })).body.events as {
      type: string;
      activity_id?: number;
    }[];
    const completed = events
      .filter((e) => e.type === "ActivityCompleted")
      .map((e) => e.activity_id);
    assert.deepEqual(
      [...completed].sort((x, y) => x! - y!),
      Array.from({ length: 10 }, (_, i) => i + 1),
      `run ${n}: each of its 10 activities completed once`,
    );
    assert.equal(events.filter((e) => e.type === "RunCompleted").length, 1);
  }
});
