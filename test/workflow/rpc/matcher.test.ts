// The matcher's dispatch rules with real worker processes: a session never holds more than
// its concurrency, the backlog is bounded, a killed worker's attempts are reported detached
// and a retry goes to another worker; plus its helpers (frame batching, endpoint parsing).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FrameBatcher, grpcTarget } from "../../../src/protocol/worker-stream/index.ts";
import { until } from "../../support/until.ts";
import {
  ACTIVITIES,
  offer,
  sessions,
  spawnWorker,
  startEndpoint,
  tempDir,
  tokenFile,
  writeJson,
} from "../../support/worker-endpoint.ts";

async function moduleDoc() {
  const dir = await tempDir();
  const doc = await writeJson(dir, "module.json", {
    name: "module-worker",
    task_queue: "q",
    actions: {
      hold: { module: ACTIVITIES, export: "hold" },
      add: { module: ACTIVITIES, export: "add" },
    },
  });
  return { doc, token: await tokenFile(dir, "worker-all") };
}

describe("matcher with real workers", () => {
  test("a worker never runs more than --concurrency attempts; the rest wait in the backlog", async () => {
    const { endpoint, recorder, address } = await startEndpoint();
    const { doc, token } = await moduleDoc();
    const w = spawnWorker([
      "module",
      doc,
      "--endpoint",
      address,
      "--token-file",
      token,
      "--concurrency",
      "2",
    ]);
    try {
      await sessions(endpoint, 1);
      const tasks = Array.from({ length: 6 }, () => offer("hold", { ms: 150 }));
      const outcomes = tasks.map((t) => endpoint.matcher.offer(t));
      assert.deepEqual(outcomes, [
        "dispatched",
        "dispatched",
        "queued",
        "queued",
        "queued",
        "queued",
      ]);
      assert.deepEqual(endpoint.matcher.stats(), { sessions: 1, holding: 6, waiting: 4 });
      await recorder.until(() => recorder.results.length === 6, "six results");
      assert.ok(recorder.results.every((r) => r.type === "completed"));
      assert.deepEqual(endpoint.matcher.stats(), { sessions: 1, holding: 0, waiting: 0 });
    } finally {
      w.kill();
      await w.exited;
      await endpoint.close();
    }
  });

  test("SIGKILL of a worker detaches its attempts; the retry runs on another worker", async () => {
    const { endpoint, recorder, address } = await startEndpoint();
    const { doc, token } = await moduleDoc();
    const first = spawnWorker(["module", doc, "--endpoint", address, "--token-file", token]);
    let second: ReturnType<typeof spawnWorker> | undefined;
    try {
      await sessions(endpoint, 1);
      const attempt1 = offer("hold", { ms: 60_000 }, { heartbeatMs: 60 });
      endpoint.matcher.offer(attempt1);
      await recorder.until(
        () => recorder.heartbeats.length > 0,
        "a heartbeat from the first worker",
      );
      first.kill("SIGKILL");
      await first.exited;
      await recorder.until(() => recorder.detached.length === 1, "the attempt to be detached");
      assert.deepEqual(recorder.detached, [attempt1.ref]);
      // The engine's heartbeat timer fires: it releases attempt 1 and offers attempt 2.
      endpoint.matcher.release(attempt1.ref, "heartbeat timeout");
      second = spawnWorker(["module", doc, "--endpoint", address, "--token-file", token]);
      const attempt2 = offer("hold", { ms: 10 }, { ref: { ...attempt1.ref, attempt: 2 } });
      assert.equal(endpoint.matcher.offer(attempt2), "queued");
      const result = await recorder.waitResult(attempt2.ref);
      assert.equal(result.type, "completed");
      assert.equal(recorder.resultFor(attempt1.ref), undefined);
    } finally {
      first.kill("SIGKILL");
      second?.kill();
      await second?.exited;
      await endpoint.close();
    }
  });

  test("the hello declares the worker: name, kind, namespace, queue, concurrency, deployment, actions", async () => {
    const { endpoint, address } = await startEndpoint();
    const { doc, token } = await moduleDoc();
    const w = spawnWorker(
      [
        "module",
        doc,
        "--endpoint",
        address,
        "--token-file",
        token,
        "--concurrency",
        "3",
        "--namespace",
        "ns1",
      ],
      { SKEIN_DEPLOYMENT: "billing-workers@7" },
    );
    try {
      await sessions(endpoint, 1);
      const [session] = endpoint.matcher.workers();
      assert.ok(session !== undefined);
      assert.match(session.instanceId, /^[0-9a-f-]{36}$/);
      assert.deepEqual(
        { ...session, sessionId: "", instanceId: "" },
        {
          sessionId: "",
          instanceId: "",
          name: "module-worker",
          kind: "module",
          namespace: "ns1",
          taskQueue: "q",
          concurrency: 3,
          deployment: "billing-workers@7",
          actions: [
            { action: "hold", capabilities: ["Cancel"] },
            { action: "add", capabilities: ["Cancel"] },
          ],
          busy: 0,
        },
      );
    } finally {
      w.kill();
      await w.exited;
      await endpoint.close();
    }
  });

  test("a run's live attempts are its own, held by a worker; settled ones leave the list", async () => {
    const { endpoint, address } = await startEndpoint();
    const { doc, token } = await moduleDoc();
    const w = spawnWorker([
      "module",
      doc,
      "--endpoint",
      address,
      "--token-file",
      token,
      "--concurrency",
      "8",
    ]);
    try {
      await sessions(endpoint, 1);
      const a = offer("hold", { ms: 60_000 });
      const a2 = offer(
        "hold",
        { ms: 60_000 },
        { ref: { ...a.ref, activity_id: a.ref.activity_id + 1000 } },
      );
      const others = Array.from({ length: 5 }, () => offer("hold", { ms: 60_000 }));
      for (const task of [a, a2, ...others]) endpoint.matcher.offer(task);
      const live = () =>
        endpoint.matcher
          .liveAttempts(a.ref.run_id)
          .map((x) => x.ref.activity_id)
          .sort((x, y) => x - y);
      assert.deepEqual(live(), [a.ref.activity_id, a2.ref.activity_id]);
      for (const t of others) assert.equal(endpoint.matcher.liveAttempts(t.ref.run_id).length, 1);
      // Released: the worker stops it, and once it has, the run lists only the other.
      endpoint.matcher.release(a.ref, "done with it");
      await until("the released attempt to stop", () => live().length === 1);
      assert.deepEqual(live(), [a2.ref.activity_id]);
    } finally {
      w.kill();
      await w.exited;
      await endpoint.close();
    }
  });

  test("the backlog is bounded: past it an offer is refused with task_queue_full", async () => {
    const { endpoint } = await startEndpoint({ maxBacklog: 2 });
    try {
      endpoint.matcher.offer(offer("add", {}));
      endpoint.matcher.offer(offer("add", {}));
      assert.throws(() => endpoint.matcher.offer(offer("add", {})), { code: "task_queue_full" });
    } finally {
      await endpoint.close();
    }
  });

  test("the same attempt cannot be offered twice", async () => {
    const { endpoint } = await startEndpoint();
    try {
      const t = offer("add", {});
      endpoint.matcher.offer(t);
      assert.throws(() => endpoint.matcher.offer(t), { code: "attempt_already_dispatched" });
    } finally {
      await endpoint.close();
    }
  });
});

describe("FrameBatcher", () => {
  test("frames pushed in one turn are written as one batch", async () => {
    const writes: number[][] = [];
    const b = new FrameBatcher<number>((frames) => writes.push(frames));
    b.push(1);
    b.push(2);
    b.push(3);
    assert.deepEqual(writes, []);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(writes, [[1, 2, 3]]);
  });

  test("a full batch is written at once", () => {
    const writes: number[][] = [];
    const b = new FrameBatcher<number>((frames) => writes.push(frames), 2);
    b.push(1);
    b.push(2);
    assert.deepEqual(writes, [[1, 2]]);
    b.clear();
  });
});

describe("grpcTarget", () => {
  const rows: [input: string, target: string | undefined][] = [
    ["127.0.0.1:7233", "127.0.0.1:7233"],
    ["http://localhost:7233", "localhost:7233"],
    ["http://[::1]:7233/", "[::1]:7233"],
    ["localhost", undefined],
    ["https://localhost:7233", undefined],
    ["localhost:0", undefined],
    ["localhost:65536", undefined],
  ];
  for (const [input, target] of rows) {
    test(`${input} -> ${target}`, () => assert.equal(grpcTarget(input), target));
  }
});
