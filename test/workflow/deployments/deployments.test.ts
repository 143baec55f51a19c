// Worker deployments, black box: the real `skein serve` with deployments enabled, real
// supervised `skein worker` children connecting to a gRPC worker endpoint started in this
// test process (the serve command's own gRPC endpoint lands with the engine wiring), and
// the HTTP API. Covers the desired-state table, the error table and the supervisor's duties.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, describe, test } from "node:test";
import { offer, writeJson } from "../../support/worker-endpoint.ts";
import {
  adminToken,
  call,
  type ServerProcess,
  serveForSuite,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";
import {
  alive,
  logText,
  processesMentioning,
  until,
  type WorkerFixture,
  workerFixture,
} from "./support.ts";

const enc = encodeURIComponent;

describe("worker deployments against a running server", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess;
  let admin: string;
  let w: WorkerFixture;
  let configFile: string;
  const pids: number[] = [];

  const api = (method: string, path: string, body?: object, token = admin) =>
    call(server.url, method, path, { token, ...(body === undefined ? {} : { body }) });
  const session = (deployment: string) =>
    w.endpoint.endpoint.matcher.workers().find((s) => s.deployment === deployment);

  before(async () => {
    dir = await tempDir();
    configFile = await writeConfig(
      dir.path,
      '[deployments]\nenabled = true\n[cluster]\nnode_id = "node-a"',
    );
    server = await startServe(configFile);
    admin = await adminToken(dir.path);
    w = await workerFixture(dir.path);
  });
  after(async () => {
    await server?.stop();
    await w?.endpoint.endpoint.close();
    for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} outlived the server`);
    assert.deepEqual(processesMentioning(w.document), [], "no worker process is left");
    await dir?.remove();
  });

  test("create running: the child is live when PUT answers, connects with its identity and serves the queue", async () => {
    const r = await api("PUT", "/worker-deployments/alpha", w.record());
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.outcome, "created");
    assert.equal(r.body.deployment.name, "alpha");
    assert.equal(r.body.deployment.desired, "running");
    assert.equal(r.body.deployment.revision, 1);
    assert.equal(r.body.deployment.worker.name, "echoer");
    assert.match(r.body.deployment.binary.entry_sha256, /^[0-9a-f]{64}$/);
    assert.equal(r.body.deployment.binary.path, process.execPath);
    const pid = r.body.process.pid as number;
    pids.push(pid);
    assert.equal(r.body.process.state, "running");
    assert.equal(alive(pid), true);
    const s = await until("alpha@1 to connect", () => session("alpha@1"));
    assert.deepEqual([s.name, s.namespace, s.taskQueue], ["echoer", "default", "q"]);
    const task = offer("echo", { hello: 1 });
    w.endpoint.endpoint.matcher.offer(task);
    const result = await w.endpoint.recorder.waitResult(task.ref);
    assert.equal(result.type, "completed");
    assert.equal(typeof (await logText(join(dir.path, "data"), "alpha")), "string");
    assert.ok(existsSync(join(dir.path, "data", "deployments", "logs", "alpha.log")));
  });

  test("PUT of the same record is unchanged and keeps the process", async () => {
    const before = (await api("GET", "/workers/managed")).body.managed.find(
      (m: { name: string }) => m.name === "alpha",
    );
    const r = await api("PUT", "/worker-deployments/alpha", w.record());
    assert.equal(r.body.outcome, "unchanged");
    assert.equal(r.body.process.pid, before.pid);
  });

  test("PUT that changes the launch replaces the running instance (pid changes)", async () => {
    const old = (await api("GET", "/worker-deployments/alpha")).body.deployment;
    const oldPid = (await api("GET", "/workers/managed")).body.managed[0].pid;
    const r = await api("PUT", "/worker-deployments/alpha", w.record({}, ["--concurrency", "2"]));
    assert.equal(r.body.outcome, "updated");
    assert.equal(r.body.deployment.revision, old.revision + 1);
    pids.push(r.body.process.pid);
    assert.notEqual(r.body.process.pid, oldPid);
    assert.equal(alive(oldPid), false);
    assert.equal(alive(r.body.process.pid), true);
    const s = await until("alpha@2 to connect", () => session("alpha@2"));
    assert.equal(s.concurrency, 2);
  });

  test("desired-state table: running → stopped leaves no process; stopped → running starts one", async () => {
    const pid = (await api("GET", "/workers/managed")).body.managed[0].pid;
    const stop = await api("POST", "/worker-deployments/alpha/desired-state", {
      desired: "stopped",
    });
    assert.equal(stop.status, 200, JSON.stringify(stop.body));
    assert.deepEqual(
      [stop.body.name, stop.body.desired, stop.body.applied.state],
      ["alpha", "stopped", "stopped"],
    );
    assert.equal(stop.body.applied.pid, null);
    assert.equal(alive(pid), false);
    assert.equal(
      (await api("GET", "/worker-deployments/alpha")).body.deployment.desired,
      "stopped",
    );

    const start = await api("POST", "/worker-deployments/alpha/desired-state", {
      desired: "running",
    });
    assert.equal(start.body.applied.state, "running");
    pids.push(start.body.applied.pid);
    assert.equal(alive(start.body.applied.pid), true);
    assert.equal(
      (await api("GET", "/worker-deployments/alpha")).body.deployment.desired,
      "running",
    );
  });

  test("PUT with desired stopped over a running record stops it (outcome updated)", async () => {
    const pid = (await api("GET", "/workers/managed")).body.managed[0].pid;
    const r = await api(
      "PUT",
      "/worker-deployments/alpha",
      w.record({ desired: "stopped" }, ["--concurrency", "2"]),
    );
    assert.equal(r.body.outcome, "updated");
    assert.equal(r.body.process.state, "stopped");
    assert.equal(alive(pid), false);
    const again = await api(
      "PUT",
      "/worker-deployments/alpha",
      w.record({}, ["--concurrency", "2"]),
    );
    pids.push(again.body.process.pid);
    assert.equal(again.body.process.state, "running");
  });

  test("a crashed worker is restarted with backoff, visible in GET /workers/managed", async () => {
    const first = (await api("GET", "/workers/managed")).body.managed[0];
    assert.equal(first.restarts, 0);
    process.kill(first.pid, "SIGKILL");
    const restarted = await until("restart", async () => {
      const m = (await api("GET", "/workers/managed")).body.managed[0];
      return m.restarts === 1 && m.state === "running" ? m : undefined;
    });
    pids.push(restarted.pid);
    assert.notEqual(restarted.pid, first.pid);
    assert.equal(restarted.last_exit.signal, "SIGKILL");
    assert.equal(restarted.current_launch, true);
    // The second crash in a row waits longer than the first: next_start_at shows the wait.
    process.kill(restarted.pid, "SIGKILL");
    const backing = await until("second restart", async () => {
      const m = (await api("GET", "/workers/managed")).body.managed[0];
      return m.state === "backing_off" || m.restarts === 2 ? m : undefined;
    });
    assert.equal(backing.restarts, 2);
    const again = await until("running again", async () => {
      const m = (await api("GET", "/workers/managed")).body.managed[0];
      return m.state === "running" ? m : undefined;
    });
    pids.push(again.pid);
  });

  test("GET /worker-deployments lists records; GET of one; managed view joins the process", async () => {
    const list = await api("GET", "/worker-deployments");
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.deployments.map((d: { name: string }) => d.name),
      ["alpha"],
    );
    assert.deepEqual(list.body.undecodable, []);
    const managed = (await api("GET", "/workers/managed")).body;
    assert.equal(managed.node_id, "node-a");
    const m = managed.managed[0];
    assert.deepEqual(
      [m.name, m.desired, m.runs_here, m.state, m.current_launch, typeof m.started_at],
      ["alpha", "running", true, "running", true, "string"],
    );
  });

  test("node placement: a record for another node runs nowhere here; one for this node runs", async () => {
    const other = await api("PUT", "/worker-deployments/elsewhere", w.record({ node: "node-b" }));
    assert.equal(other.status, 200, JSON.stringify(other.body));
    assert.equal(other.body.process.pid, null);
    const m = (await api("GET", "/workers/managed")).body.managed.find(
      (x: { name: string }) => x.name === "elsewhere",
    );
    assert.deepEqual([m.runs_here, m.state, m.pid], [false, "stopped", null]);
    const mine = await api("PUT", "/worker-deployments/mine", w.record({ node: "node-a" }));
    assert.equal(mine.body.process.state, "running");
    pids.push(mine.body.process.pid);
    assert.equal((await api("DELETE", "/worker-deployments/elsewhere")).status, 200);
  });

  test("DELETE stops and forgets the process and removes the record; a second DELETE is 404", async () => {
    const pid = (await api("GET", "/workers/managed")).body.managed.find(
      (x: { name: string }) => x.name === "mine",
    ).pid;
    const r = await api("DELETE", "/worker-deployments/mine");
    assert.equal(r.status, 200);
    assert.equal(r.body.existed, true);
    assert.equal(r.body.deployment.name, "mine");
    assert.equal(alive(pid), false);
    assert.equal((await api("GET", "/worker-deployments/mine")).status, 404);
    const again = await api("DELETE", "/worker-deployments/mine");
    assert.deepEqual([again.status, again.body.error.code], [404, "deployment_not_found"]);
  });

  // The error table, and the refusals the issue names; each row would pass if its rule broke.
  const refusals: [string, string, string, () => object, number, string][] = [
    [
      "GET absent name",
      "GET",
      "/worker-deployments/absent",
      () => ({}),
      404,
      "deployment_not_found",
    ],
    [
      "DELETE absent name",
      "DELETE",
      "/worker-deployments/absent",
      () => ({}),
      404,
      "deployment_not_found",
    ],
    [
      "desired-state of absent name",
      "POST",
      "/worker-deployments/absent/desired-state",
      () => ({ desired: "running" }),
      404,
      "deployment_not_found",
    ],
    [
      "auto/ name reserved",
      "PUT",
      `/worker-deployments/${enc("auto/x")}`,
      () => w.record(),
      400,
      "reserved_deployment_name",
    ],
    [
      "artifact type other than builtin",
      "PUT",
      "/worker-deployments/x",
      () => w.record({ artifact: { type: "docker", verb: w.verb() } }),
      400,
      "unsupported_artifact",
    ],
    [
      "verb not starting with worker",
      "PUT",
      "/worker-deployments/x",
      () => w.record({ artifact: { type: "builtin", verb: ["serve"] } }),
      400,
      "invalid_deployment",
    ],
    [
      "unknown worker kind",
      "PUT",
      "/worker-deployments/x",
      () => w.record({ artifact: { type: "builtin", verb: ["worker", "python", w.document] } }),
      400,
      "invalid_deployment",
    ],
    [
      "relative document path",
      "PUT",
      "/worker-deployments/x",
      () => w.record({ artifact: { type: "builtin", verb: ["worker", "exec", "worker.json"] } }),
      400,
      "invalid_deployment",
    ],
    [
      "document missing on the host",
      "PUT",
      "/worker-deployments/x",
      () =>
        w.record({ artifact: { type: "builtin", verb: ["worker", "exec", `${w.document}.gone`] } }),
      400,
      "invalid_deployment",
    ],
    [
      "unknown option",
      "PUT",
      "/worker-deployments/x",
      () => w.record({}, ["--bogus", "1"]),
      400,
      "invalid_deployment",
    ],
    [
      "concurrency not an integer",
      "PUT",
      "/worker-deployments/x",
      () => w.record({}, ["--concurrency", "two"]),
      400,
      "invalid_deployment",
    ],
    [
      "reconnect backoff not a number",
      "PUT",
      "/worker-deployments/x",
      () => w.record({}, ["--reconnect-max-attempts", "1.5"]),
      400,
      "invalid_deployment",
    ],
    [
      "token file missing",
      "PUT",
      "/worker-deployments/x",
      () =>
        w.record({
          artifact: {
            type: "builtin",
            verb: ["worker", "exec", w.document, "--token-file", `${w.token}.gone`],
          },
        }),
      400,
      "invalid_deployment",
    ],
    [
      "--namespace not one of namespaces",
      "PUT",
      "/worker-deployments/x",
      () => w.record({}, ["--namespace", "other"]),
      400,
      "invalid_deployment",
    ],
    [
      "task_queue disagrees with the document",
      "PUT",
      "/worker-deployments/x",
      () => w.record({ task_queue: "elsewhere" }),
      400,
      "invalid_deployment",
    ],
    [
      "desired not running|stopped",
      "PUT",
      "/worker-deployments/x",
      () => w.record({ desired: "paused" }),
      400,
      "decode_refused",
    ],
    [
      "desired-state body not running|stopped",
      "POST",
      "/worker-deployments/alpha/desired-state",
      () => ({ desired: "paused" }),
      400,
      "decode_refused",
    ],
    [
      "namespaces missing",
      "PUT",
      "/worker-deployments/x",
      () => ({ ...w.record(), namespaces: undefined }),
      400,
      "decode_refused",
    ],
    [
      "unknown field",
      "PUT",
      "/worker-deployments/x",
      () => w.record({ extra: 1 }),
      400,
      "decode_refused",
    ],
  ];
  for (const [what, method, path, body, status, code] of refusals) {
    test(`refused: ${what} → ${status} ${code}`, async () => {
      const b = method === "GET" || method === "DELETE" ? undefined : body();
      const r = await api(method, path, b);
      assert.equal(r.status, status, JSON.stringify(r.body));
      assert.equal(r.body.error.code, code);
      assert.equal((await api("GET", "/worker-deployments/x")).status, 404);
    });
  }

  test("validation reads the worker document without running it: a module is not imported", async () => {
    const marker = join(dir.path, "imported.marker");
    await writeFile(
      join(dir.path, "side-effect.mjs"),
      `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "x");\nexport default async () => 1;\n`,
    );
    const doc = await writeJson(dir.path, "module-worker.json", {
      name: "mod",
      task_queue: "q",
      actions: { run: { module: "side-effect.mjs" } },
    });
    const r = await api("PUT", "/worker-deployments/modular", {
      ...w.record({ desired: "stopped" }),
      artifact: { type: "builtin", verb: ["worker", "module", doc] },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.deployment.worker.kind, "module");
    assert.equal(existsSync(marker), false);
    assert.equal((await api("DELETE", "/worker-deployments/modular")).status, 200);
  });

  const endpoints: [string, string, () => object | undefined][] = [
    ["GET", "/worker-deployments", () => undefined],
    ["GET", "/worker-deployments/alpha", () => undefined],
    ["PUT", "/worker-deployments/alpha", () => w.record()],
    ["POST", "/worker-deployments/alpha/desired-state", () => ({ desired: "stopped" })],
    ["DELETE", "/worker-deployments/alpha", () => undefined],
    ["GET", "/workers/managed", () => undefined],
  ];
  for (const [method, path, body] of endpoints) {
    test(`${method} ${path} needs the deploy grant (403) and a bearer (401)`, async () => {
      const noDeploy = await tokenFor(dir.path, { namespaces: "*", deploy: false });
      const r = await api(method, path, body(), noDeploy);
      assert.deepEqual([r.status, r.body.error.code], [403, "forbidden"]);
      const anon = await call(server.url, method, path, { body: body() });
      assert.equal(anon.status, 401);
      assert.equal(
        (await api("GET", "/worker-deployments/alpha")).body.deployment.desired,
        "running",
      );
    });
  }

  test("server restart: children stop with the server, running records come back, undecodable rows are listed apart", async () => {
    const before = (await api("GET", "/workers/managed")).body.managed[0];
    await server.stop();
    assert.equal(alive(before.pid), false, "no orphan after the server exits");
    assert.deepEqual(processesMentioning(w.document), [], "no worker process is left");
    const db = new DatabaseSync(join(dir.path, "data", "skein.db"));
    db.prepare(
      "INSERT INTO worker_deployments (name, document, created_at, updated_at) VALUES (?, ?, ?, ?)",
    ).run("broken", '{"artifact": 7}', 1, 1);
    db.close();
    server = await startServe(configFile);
    const list = await api("GET", "/worker-deployments");
    assert.deepEqual(
      list.body.deployments.map((d: { name: string }) => d.name),
      ["alpha"],
    );
    assert.equal(list.body.undecodable.length, 1);
    assert.equal(list.body.undecodable[0].name, "broken");
    assert.match(list.body.undecodable[0].reason, /artifact/);
    const m = (await api("GET", "/workers/managed")).body.managed[0];
    assert.equal(m.state, "running");
    pids.push(m.pid);
    assert.notEqual(m.pid, before.pid);
    await until("alpha to reconnect after the restart", () =>
      w.endpoint.endpoint.matcher
        .workers()
        .some((s) => s.deployment === `alpha@${m.revision}` && s.instanceId !== undefined),
    );
    const get = await api("GET", "/worker-deployments/broken");
    assert.deepEqual([get.status, get.body.error.code], [409, "deployment_undecodable"]);
    const del = await api("DELETE", "/worker-deployments/broken");
    assert.deepEqual(
      [del.status, del.body.existed, del.body.deployment.name],
      [200, true, "broken"],
    );
  });
});

describe("worker deployments while deployments.enabled = false", () => {
  const s = serveForSuite("[deployments]\nenabled = false");

  const rows: [string, string][] = [
    ["GET", "/worker-deployments"],
    ["GET", "/worker-deployments/a"],
    ["PUT", "/worker-deployments/a"],
    ["POST", "/worker-deployments/a/desired-state"],
    ["DELETE", "/worker-deployments/a"],
    ["GET", "/workers/managed"],
  ];
  for (const [method, path] of rows) {
    test(`${method} ${path} → 403 deployments_disabled, even for the admin`, async () => {
      const body = method === "PUT" || method === "POST" ? { desired: "running" } : undefined;
      const r = await call(s.server.url, method, path, {
        token: s.admin,
        ...(body ? { body } : {}),
      });
      assert.deepEqual([r.status, r.body.error.code], [403, "deployments_disabled"]);
    });
  }
});
