// Run trees survive SIGKILL of the real server: a durable timer, a signal, a child run and a
// collect's outbox members, each across a kill and a restart of `skein serve` on the same
// data directory, with a real `skein worker` that re-attaches. Every step is recorded once.

import assert from "node:assert/strict";
import { test } from "node:test";
import { until } from "../../support/until.ts";
import { freePort, moduleWorker } from "../../support/worker-endpoint.ts";
import {
  adminToken,
  call,
  type ServerProcess,
  startServe,
  tempDir,
  writeConfig,
} from "../support/server.ts";

const TREE = `name: tree
task_queue: q
steps:
  - { id: nap, sleep: { duration_ms: 400 } }
  - { id: go, wait: { signal: go } }
  - { id: kid, child: { workflow: kid, input: "{ 'n': steps.go.n }" } }
  - id: fan
    collect:
      items: "[1, 2, 3, 4, 5]"
      step: { id: one, call: { action: inc, input: "{ 'n': item }" } }
output: "{ 'kid': steps.kid.n, 'fan': steps.fan.n }"
`;
const KID = `name: kid
task_queue: q
steps:
  - { id: nap, sleep: { duration_ms: 400 } }
  - { id: add, call: { action: inc, input: "{ 'n': input.n }" } }
output: steps.add
`;

test("timers, signals, child awaits and outbox members resume after SIGKILL of the server", async (t) => {
  const dir = await tempDir();
  t.after(dir.remove);
  const config = await writeConfig(
    dir.path,
    '[namespaces]\ndefault = "default"\nmax_in_flight_activities = 2\n[outbox]\nenabled = true',
  );
  const grpc = `127.0.0.1:${await freePort()}`;
  let server: ServerProcess = await startServe(config, ["--grpc-listen", grpc]);
  t.after(() => server.stop());
  const token = await adminToken(dir.path);
  const api = (path: string, body: object) => call(server.url, "POST", path, { token, body });
  for (const definition of [KID, TREE]) {
    assert.equal((await api("/workflows/definitions", { definition })).status, 200);
  }
  const worker = await moduleWorker(dir.path, { endpoint: grpc, token, actions: ["inc"] });
  t.after(() => worker.kill());

  const history = async (workflowId: string) =>
    (await api("/workflows/history", { workflow_id: workflowId })).body.events as {
      type: string;
      [k: string]: unknown;
    }[];
  // The server restarts in between: a request that fails meanwhile is read as "not yet".
  const untilAnswered = <T>(what: string, read: () => Promise<T | undefined>): Promise<T> =>
    until(what, () => read().catch(() => undefined));
  const restart = async () => {
    await server.stop("SIGKILL");
    server = await startServe(config, ["--grpc-listen", grpc]);
  };
  const count = (events: { type: string }[], type: string) =>
    events.filter((e) => e.type === type).length;

  const started = await api("/workflows/start", { name: "tree" });
  const id: string = started.body.workflow_id;

  // 1. Killed while the durable timer is pending.
  await untilAnswered("the timer", async () =>
    count(await history(id), "TimerStarted") === 1 ? true : undefined,
  );
  await restart();
  // 2. The timer fires after the restart; the run reaches its wait; a signal; killed again.
  await untilAnswered("the timer fired", async () =>
    count(await history(id), "TimerFired") === 1 ? true : undefined,
  );
  const signalled = await api("/workflows/signal", {
    workflow_id: id,
    signal: "go",
    payload: { n: 40 },
  });
  assert.equal(signalled.body.applied, true);
  // 3. Killed while the parent awaits its child (the child sleeping).
  const kid = await untilAnswered("the child", async () => {
    const e = (await history(id)).find((x) => x.type === "ChildStarted");
    return e?.child_run_id as string | undefined;
  });
  await restart();

  const run = await untilAnswered("the run to complete", async () => {
    const r = await api("/workflows/describe", { workflow_id: id });
    return r.body.run?.status === "Completed" ? r.body.run : undefined;
  });
  assert.deepEqual(run.output, { kid: 41, fan: [2, 3, 4, 5, 6] });

  const events = await history(id);
  for (const [type, n] of [
    ["TimerFired", 1],
    ["SignalReceived", 1],
    ["ChildStarted", 1],
    ["ChildEnded", 1],
    ["ActivityCompleted", 5],
  ] as const) {
    assert.equal(count(events, type), n, `${type} in the parent's history`);
  }
  const kidEvents = await history(kid);
  assert.equal(count(kidEvents, "ActivityCompleted"), 1);
  assert.equal(kidEvents.at(-1)?.type, "RunCompleted");
});
