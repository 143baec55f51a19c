// The worker's connection lifecycle against a real endpoint: refusals are final, a server
// that is down then comes up is reached by backing off, giving up after the configured
// attempts exits non-zero, and a worker that loses the server mid-task re-attaches and
// reports the result exactly once.

import assert from "node:assert/strict";
import { connect, createServer } from "node:net";
import { before, describe, test } from "node:test";
import { until } from "../support/until.ts";
import {
  ACTIVITIES,
  freePort,
  offer,
  Recorder,
  sessions,
  spawnWorker,
  startEndpoint,
  tokenFile,
  workerFiles,
} from "../support/worker-endpoint.ts";

let dir: string;
let doc: string;
let token: string;

before(async () => {
  ({ dir, token, doc } = await workerFiles("module.json", {
    name: "module-worker",
    task_queue: "q",
    actions: {
      add: { module: ACTIVITIES, export: "add" },
      hold: { module: ACTIVITIES, export: "hold" },
    },
  }));
});

describe("refusals by the server are final (exit 1, no retry)", () => {
  const rows: [
    name: string,
    token: string | undefined,
    namespace: string,
    gateOpen: boolean,
    message: RegExp,
  ][] = [
    [
      "no bearer",
      undefined,
      "default",
      true,
      /refused by the server: unauthenticated: missing or malformed bearer/,
    ],
    [
      "unknown bearer",
      "not-a-token",
      "default",
      true,
      /refused by the server: unauthenticated: invalid bearer/,
    ],
    [
      "bearer without the worker grant",
      "no-worker-grant",
      "default",
      true,
      /forbidden: .*lacks the worker grant/,
    ],
    ["namespace not granted", "worker-a", "b", true, /forbidden: .*no grant for namespace "b"/],
    [
      "namespace absent under auto_create = closed",
      "worker-all",
      "ghost",
      false,
      /namespace_not_found: namespace "ghost" does not exist/,
    ],
  ];
  for (const [name, bearer, namespace, gateOpen, message] of rows) {
    test(name, async () => {
      const { endpoint, address } = await startEndpoint({ gate: async () => gateOpen });
      try {
        const args = [
          "module",
          doc,
          "--endpoint",
          address,
          "--namespace",
          namespace,
          "--reconnect-max-attempts",
          "5",
        ];
        if (bearer !== undefined) args.push("--token-file", await tokenFile(dir, bearer));
        const w = spawnWorker(args);
        assert.equal(await w.exited, 1);
        assert.match(w.stderr(), message);
        assert.equal(endpoint.matcher.stats().sessions, 0);
      } finally {
        await endpoint.close();
      }
    });
  }
});

/** A module worker at 127.0.0.1:`port`, reconnecting from `initial` to `max` seconds. */
function workerAt(port: number, initial: string, max: string, attempts: number) {
  return spawnWorker([
    "module",
    doc,
    "--endpoint",
    `127.0.0.1:${port}`,
    "--token-file",
    token,
    "--reconnect-initial-backoff",
    initial,
    "--reconnect-max-backoff",
    max,
    "--reconnect-max-attempts",
    String(attempts),
  ]);
}

describe("reconnect", () => {
  test("gives up after --reconnect-max-attempts failures with a clear message", async () => {
    const port = await freePort();
    const w = workerAt(port, "0.02", "0.05", 3);
    assert.equal(await w.exited, 1);
    assert.match(
      w.stderr(),
      new RegExp(`skein worker: gave up after 3 reconnect attempts to 127\\.0\\.0\\.1:${port}: `),
    );
  });

  test("a server that is down, then comes up, is reached by backing off", async () => {
    const port = await freePort();
    const w = workerAt(port, "0.05", "0.2", 200);
    // The worker fails a few times against the closed port first.
    await until(
      "three failed connects",
      () => (w.stderr().match(/cannot reach the server/g) ?? []).length >= 3,
    );
    assert.equal(w.child.exitCode, null, "still trying");
    const { endpoint, recorder } = await startEndpoint({ port });
    try {
      const task = offer("add", { a: 1, b: 1 });
      endpoint.matcher.offer(task);
      const result = await recorder.waitResult(task.ref);
      assert.deepEqual(result, { type: "completed", ref: task.ref, output: '{"sum":2}' });
      w.kill();
      assert.equal(await w.exited, 0);
    } finally {
      w.kill();
      await endpoint.close();
    }
  });
});

describe("reconnect waits are jittered and bounded", () => {
  test("two workers against a closed port wait different times, each in [d/2, d] of 50 ms doubling to 200 ms", async () => {
    const port = await freePort();
    const attempts = 6;
    const start = () => workerAt(port, "0.05", "0.2", attempts);
    const workers = [start(), start()];
    const waits: number[][] = [];
    for (const w of workers) {
      assert.equal(await w.exited, 1);
      const logged = w
        .stderr()
        .split("\n")
        .filter((line) => line.includes('"wait_ms"'))
        .map((line) => JSON.parse(line) as { attempt: number; wait_ms: number });
      assert.equal(logged.length, attempts, w.stderr());
      for (const { attempt, wait_ms } of logged) {
        const d = Math.min(200, 50 * 2 ** (attempt - 1));
        assert.ok(wait_ms >= d / 2 && wait_ms <= d, `attempt ${attempt}: ${wait_ms} ms of ${d}`);
      }
      waits.push(logged.map((l) => l.wait_ms));
    }
    assert.notDeepEqual(waits[0], waits[1], "two workers drew the same six waits");
  });
});

describe("losing the server mid-task", () => {
  let port: number;

  test("the attempt finishes, the worker re-attaches, the result is reported exactly once", async () => {
    port = await freePort();
    const first = await startEndpoint({ port });
    const w = spawnWorker([
      "module",
      doc,
      "--endpoint",
      `127.0.0.1:${port}`,
      "--token-file",
      token,
      "--reconnect-initial-backoff",
      "0.05",
      "--reconnect-max-backoff",
      "0.1",
    ]);
    const recorder = new Recorder();
    try {
      await sessions(first.endpoint, 1);
      const task = offer("hold", { ms: 700 }, { heartbeatMs: 60 });
      first.endpoint.matcher.offer(task);
      // A heartbeat proves the worker is running the attempt.
      await first.recorder.until(() => first.recorder.heartbeats.length > 0, "a heartbeat");
      // The server goes away while the attempt runs, and comes back on the same port.
      await first.endpoint.close();
      const second = await startEndpoint({ port, recorder });
      try {
        const result = await recorder.waitResult(task.ref);
        assert.equal(result.type, "completed");
        assert.deepEqual(recorder.attached, [task.ref], "the new session re-attached the attempt");
        // A later task on the same session proves the stream is healthy; the first result
        // must still have been reported only once.
        const next = offer("add", { a: 2, b: 3 });
        second.endpoint.matcher.offer(next);
        await recorder.waitResult(next.ref);
        const reports = recorder.results.filter((r) => r.ref.run_id === task.ref.run_id);
        assert.equal(reports.length, 1);
        assert.equal(first.recorder.results.length, 0);
      } finally {
        w.kill();
        await w.exited;
        await second.endpoint.close();
      }
    } finally {
      w.kill();
    }
  });
});

describe("a dropped connection to the same server", () => {
  test("the detached attempt re-attaches to the new session and reports once", async () => {
    const { endpoint, recorder, address } = await startEndpoint();
    const [host, port] = address.split(":") as [string, string];
    // A TCP proxy between worker and server whose connections the test can cut.
    const sockets = new Set<import("node:net").Socket>();
    const proxy = createServer((client) => {
      const upstream = connect(Number(port), host);
      sockets.add(client);
      sockets.add(upstream);
      client.pipe(upstream).pipe(client);
      const drop = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on("error", drop).on("close", drop);
      upstream.on("error", drop).on("close", drop);
    });
    await new Promise<void>((done) => proxy.listen(0, "127.0.0.1", done));
    const proxyPort = (proxy.address() as import("node:net").AddressInfo).port;
    const w = spawnWorker([
      "module",
      doc,
      "--endpoint",
      `127.0.0.1:${proxyPort}`,
      "--token-file",
      token,
      "--reconnect-initial-backoff",
      "0.05",
    ]);
    try {
      await sessions(endpoint, 1);
      const task = offer("hold", { ms: 600 }, { heartbeatMs: 60 });
      endpoint.matcher.offer(task);
      await recorder.until(() => recorder.heartbeats.length > 0, "a heartbeat");
      for (const s of sockets) s.destroy();
      await recorder.until(() => recorder.detached.length === 1, "the attempt to be detached");
      await recorder.until(() => recorder.attached.length === 1, "the attempt to be re-attached");
      // Re-attached, it is live again with its action's capabilities (for interventions).
      const live = endpoint.matcher.liveAttempts(task.ref.run_id);
      if (recorder.results.length === 0) {
        assert.deepEqual(
          live.map((a) => [a.ref, a.capabilities]),
          [[task.ref, ["Cancel"]]],
        );
      }
      const result = await recorder.waitResult(task.ref);
      assert.equal(result.type, "completed");
      assert.deepEqual(recorder.attached, [task.ref]);
      assert.equal(recorder.results.length, 1);
      assert.deepEqual(endpoint.matcher.stats(), { sessions: 1, holding: 0, waiting: 0 });
    } finally {
      w.kill();
      await w.exited;
      for (const s of sockets) s.destroy();
      proxy.close();
      await endpoint.close();
    }
  });
});
