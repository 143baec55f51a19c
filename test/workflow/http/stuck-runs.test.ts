// "Why is my run stuck?" through the real server and a real worker: describe lists a live
// run's pending activities (queue, attempt, state, last failure, next retry) and how many
// connected workers serve each; `POST /task-queues/describe` shows a queue's workers,
// capacity and backlog; `GET /workflows/definitions` lists what is registered. Each read
// needs the namespace grant, like every workflow endpoint.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { until } from "../../support/until.ts";
import {
  ACTIVITIES,
  spawnWorker,
  type WorkerProcess,
  writeJson,
} from "../../support/worker-endpoint.ts";
import {
  adminToken,
  call,
  type ServerProcess,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";

const DEFINITIONS: Record<string, string> = {
  // Its queue has no worker: the attempt waits, offered, with nobody to run it.
  lonely: "name: lonely\ntask_queue: nobody\nsteps:\n  - { id: a, call: { action: noop } }\n",
  // Fails, then waits a long backoff before its second attempt.
  retrying:
    "name: retrying\ntask_queue: q\nretry: { max_attempts: 3, initial_backoff_ms: 600000, max_backoff_ms: 600000 }\n" +
    "steps:\n  - { id: a, call: { action: fail, input: \"{ 'message': 'widget jammed' }\" } }\n",
  // Runs until cancelled: a worker holds the attempt.
  holding:
    "name: holding\ntask_queue: q\nsteps:\n  - { id: a, call: { action: hold, input: \"{ 'ms': 600000 }\" } }\n",
  quick: "name: quick\ntask_queue: q\nsteps:\n  - { id: a, call: { action: noop } }\n",
};

let dir: Awaited<ReturnType<typeof tempDir>>;
let server: ServerProcess;
let token: string;
let worker: WorkerProcess;

const post = (path: string, body: object, bearer = token) =>
  call(server.url, "POST", path, { token: bearer, body });

async function start(name: string): Promise<string> {
  const r = await post("/workflows/start", { name });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.workflow_id;
}

/** Describes until `ready` holds for the answer. */
// biome-ignore lint/suspicious/noExplicitAny: describe answers are JSON read by each test
async function describeUntil(workflowId: string, ready: (body: any) => boolean) {
  let last: unknown;
  return until(
    () => `describe to get there: ${JSON.stringify(last)}`,
    async () => {
      const r = await post("/workflows/describe", { workflow_id: workflowId });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      last = r.body;
      return ready(r.body) ? r.body : undefined;
    },
  );
}

before(async () => {
  dir = await tempDir();
  server = await startServe(await writeConfig(dir.path, '[namespaces]\ndefault = "default"'));
  token = await adminToken(dir.path);
  for (const [name, text] of Object.entries(DEFINITIONS)) {
    const r = await post("/workflows/definitions", { definition: text });
    assert.equal(r.status, 200, `${name}: ${JSON.stringify(r.body)}`);
  }
  const tokenFile = join(dir.path, "worker.token");
  await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
  const document = await writeJson(dir.path, "worker.json", {
    name: "stuck-worker",
    task_queue: "q",
    actions: Object.fromEntries(
      ["noop", "fail", "hold"].map((name) => [name, { module: ACTIVITIES, export: name }]),
    ),
  });
  worker = spawnWorker([
    "module",
    document,
    "--endpoint",
    server.grpc!,
    "--token-file",
    tokenFile,
    "--concurrency",
    "4",
  ]);
  // Ready once the worker's session is listed on its queue.
  await until(
    () => `the worker to connect: ${worker.stderr()}`,
    async () =>
      (await post("/task-queues/describe", { task_queue: "q" })).body.workers?.length === 1,
  );
});

after(async () => {
  worker?.kill();
  await server?.stop();
  await dir?.remove();
});

describe("describe: pending activities", () => {
  test("a queue with no worker: waiting, attempt 1, no failure, no worker serving", async () => {
    const id = await start("lonely");
    const body = await describeUntil(id, (b) => b.pending_activities.length === 1);
    assert.equal(body.run.status, "Running");
    assert.equal(body.pending_total, 1);
    const [p] = body.pending_activities;
    assert.deepEqual(
      { ...p, scheduled_at: typeof p.scheduled_at },
      {
        activity_id: 1,
        step_id: "a",
        action: "noop",
        task_queue: "nobody",
        attempt: 1,
        state: "waiting",
        scheduled_at: "string",
        next_retry_at: null,
        last_failure: null,
        workers_serving: 0,
      },
    );
  });

  test("a failed attempt: backing off to attempt 2, with the failure and when it retries", async () => {
    const id = await start("retrying");
    const body = await describeUntil(id, (b) => b.pending_activities[0]?.attempt === 2);
    const [p] = body.pending_activities;
    assert.equal(p.state, "backing_off");
    assert.equal(p.workers_serving, 1);
    assert.deepEqual(
      { ...p.last_failure, at: typeof p.last_failure.at },
      { attempt: 1, at: "string", code: "widget_broken", message: "widget jammed" },
    );
    assert.ok(Date.parse(p.next_retry_at) > Date.now() + 60_000, p.next_retry_at);
  });

  test("an attempt a worker holds: running; an ended run has none pending", async () => {
    const id = await start("holding");
    const body = await describeUntil(id, (b) => b.pending_activities[0]?.state === "running");
    assert.equal(body.pending_activities[0].workers_serving, 1);
    const quick = await start("quick");
    const done = await describeUntil(quick, (b) => b.run.status === "Completed");
    assert.deepEqual(done.pending_activities, []);
    assert.equal(done.pending_total, 0);
  });
});

describe("POST /task-queues/describe", () => {
  test("workers, capacity, busy slots and backlog per action", async () => {
    const served = await post("/task-queues/describe", { task_queue: "q" });
    assert.equal(served.status, 200, JSON.stringify(served.body));
    assert.equal(served.body.namespace, "default");
    assert.equal(served.body.capacity, 4);
    const [w] = served.body.workers;
    assert.equal(w.name, "stuck-worker");
    assert.equal(w.kind, "module");
    assert.equal(w.concurrency, 4);
    assert.deepEqual([...w.actions].sort(), ["fail", "hold", "noop"]);
    assert.equal(w.deployment, null);
    assert.equal(served.body.backlog, 0);

    const lonely = await post("/task-queues/describe", { task_queue: "nobody" });
    assert.deepEqual(lonely.body.workers, []);
    assert.equal(lonely.body.capacity, 0);
    assert.equal(lonely.body.backlog, 1);
    assert.deepEqual(lonely.body.backlog_by_action, { noop: 1 });

    const unknown = await post("/task-queues/describe", { task_queue: "never-seen" });
    assert.deepEqual(
      { workers: unknown.body.workers, backlog: unknown.body.backlog },
      { workers: [], backlog: 0 },
    );
  });

  const refusals: [name: string, body: object, status: number, code: string][] = [
    ["no task_queue", {}, 400, "decode_refused"],
    ["empty task_queue", { task_queue: "" }, 400, "decode_refused"],
    ["control character", { task_queue: "q\u0000" }, 400, "decode_refused"],
    ["unknown field", { task_queue: "q", queue: "q" }, 400, "decode_refused"],
  ];
  for (const [name, body, status, code] of refusals) {
    test(`refused: ${name}`, async () => {
      const r = await post("/task-queues/describe", body);
      assert.equal(r.status, status, JSON.stringify(r.body));
      assert.equal(r.body.error.code, code);
    });
  }

  test("another namespace's queue is 403 for a bearer without its grant", async () => {
    const other = await tokenFor(dir.path, { namespaces: ["other"] });
    const r = await post("/task-queues/describe", { task_queue: "q" }, other);
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, "forbidden");
    const own = await post("/task-queues/describe", { namespace: "other", task_queue: "q" }, other);
    assert.equal(own.status, 200);
    assert.deepEqual(own.body.workers, [], "a queue's workers are per namespace");
  });
});

describe("GET /workflows/definitions", () => {
  test("each name once, its latest version and version count, ordered by name", async () => {
    const changed = await post("/workflows/definitions", {
      definition: DEFINITIONS.quick!.replace("noop", "hold"),
    });
    const r = await call(server.url, "GET", "/workflows/definitions", { token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.namespace, "default");
    assert.deepEqual(
      r.body.definitions.map((d: { name: string; versions: number }) => [d.name, d.versions]),
      [
        ["holding", 1],
        ["lonely", 1],
        ["quick", 2],
        ["retrying", 1],
      ],
    );
    const quick = r.body.definitions.find((d: { name: string }) => d.name === "quick");
    assert.equal(quick.version, changed.body.version);
    assert.equal(quick.registered_by, "admin");
    assert.ok(!Number.isNaN(Date.parse(quick.registered_at)));
  });

  test("?namespace= picks the namespace; its grant is needed; bad queries are refused", async () => {
    const empty = await call(server.url, "GET", "/workflows/definitions?namespace=elsewhere", {
      token,
    });
    assert.deepEqual(empty.body, { namespace: "elsewhere", definitions: [] });
    const other = await tokenFor(dir.path, { namespaces: ["other"] });
    const denied = await call(server.url, "GET", "/workflows/definitions?namespace=default", {
      token: other,
    });
    assert.equal(denied.status, 403);
    for (const query of ["?namespace=a&namespace=b", "?nope=1", "?namespace=%20%20"]) {
      const bad = await call(server.url, "GET", `/workflows/definitions${query}`, { token });
      assert.equal(bad.status, 400, `${query}: ${JSON.stringify(bad.body)}`);
    }
  });
});
