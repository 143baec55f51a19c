/**
 * Supervision of the embedding workers with the real worker: restarts after deaths (the
 * first at once, then embed_restart_ms doubling up to embed_restart_most_ms, read from the
 * logs), embed_busy beyond embed_waiting, and a worker that stops answering killed at
 * embed_call_ms.
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, test } from "node:test";
import { until } from "../../support/until.ts";
import { embedGroup, refusalOf, type Served, serve, stallingWorker, testModel } from "./fixture.ts";

function workerPids(served: Served): number[] {
  const out = execFileSync("ps", ["-o", "pid=", "--ppid", String(served.running.child.pid)], {
    encoding: "utf8",
  });
  return out
    .split("\n")
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
}

/** Restarts back off up to the most; a minute covers the longest sequence here. */
const RESTARTS = { timeoutMs: 60_000 };

describe("embedding worker supervision", () => {
  test("deaths restart with backoff: at once, then doubling up to the most", async () => {
    const model = await testModel();
    const served = await serve({
      ...embedGroup(model),
      embed_question_worker: false,
      embed_restart_ms: 200,
      embed_restart_most_ms: 500,
    });
    try {
      const client = await served.client();
      await client.call("embed.texts", { texts: ["the store"] });
      for (let death = 1; death <= 4; death++) {
        const [pid] = workerPids(served);
        assert.ok(pid, "a worker runs");
        process.kill(pid, "SIGKILL");
        await until(
          `restart ${death}`,
          () =>
            served.logs().filter((l) => l.msg === "embedding worker restarted").length === death,
          RESTARTS,
        );
      }
      const deaths = served.logs().filter((l) => l.msg === "embedding worker died; restarting");
      assert.deepEqual(
        deaths.map((l) => [l.restart, l.delay_ms]),
        [
          [1, 0],
          [2, 200],
          [3, 400],
          [4, 500],
        ],
      );
      // Each restart came no sooner than its delay after the death (log times, ms).
      const restarts = served.logs().filter((l) => l.msg === "embedding worker restarted");
      deaths.forEach((d, i) => {
        assert.ok(Number(restarts[i]!.time) - Number(d.time) >= Number(d.delay_ms));
      });
      const answer = (await client.call("embed.texts", { texts: ["the store"] })) as {
        vectors: number[][][];
      };
      assert.equal(answer.vectors.length, 1);
    } finally {
      await served.stop();
    }
  });

  test("a caller beyond embed_waiting: embed_busy; the admitted ones are answered", async () => {
    const model = await testModel();
    const served = await serve({
      ...embedGroup(model),
      embed_waiting: 1,
      embed_request_items: 256,
      embed_batch_items: 4,
    });
    try {
      const client = await served.client();
      const texts = Array.from({ length: 256 }, (_, i) => `the store branch ${i} vector search`);
      const calls = [0, 1, 2, 3].map((i) =>
        client.call("embed.texts", { texts: i === 0 ? texts : ["a"] }).then(
          () => "ok",
          (error: { code: string }) => error.code,
        ),
      );
      const outcomes = await Promise.all(calls);
      // One runs, one waits, the rest are refused.
      assert.deepEqual(outcomes, ["ok", "ok", "embed_busy", "embed_busy"]);
    } finally {
      await served.stop();
    }
  });

  test("a worker that stops answering is killed at embed_call_ms and restarted", async () => {
    const model = await testModel();
    // A worker written from the protocol docs that answers start, then never a batch.
    const stall = await stallingWorker(model);
    const served = await serve({
      ...embedGroup(model),
      embed_worker: stall,
      embed_call_ms: 300,
      embed_question_worker: false,
    });
    try {
      const client = await served.client();
      const code = await refusalOf(client.call("embed.texts", { texts: ["the store"] }));
      assert.equal(code, "embed_worker_failed");
      await until(
        "the restart",
        () => served.logs().some((l) => l.msg === "embedding worker restarted"),
        RESTARTS,
      );
      const died = served.logs().find((l) => l.msg === "embedding worker died; restarting");
      assert.match(String(died!.reason), /embed_call_ms/);
    } finally {
      await served.stop();
    }
  });
});

describe("the question worker", () => {
  test("questions are served by their own worker while documents are refused as busy", async () => {
    const model = await testModel();
    const served = await serve({
      ...embedGroup(model),
      embed_waiting: 1,
      embed_request_items: 256,
      embed_batch_items: 4,
    });
    try {
      assert.equal(workerPids(served).length, 2, "a document and a question worker");
      const client = await served.client();
      const texts = Array.from({ length: 256 }, (_, i) => `the store branch ${i} vector search`);
      const outcome = (p: Promise<unknown>) =>
        p.then(
          () => "ok",
          (error: { code: string }) => error.code,
        );
      const outcomes = await Promise.all([
        outcome(client.call("embed.texts", { texts })),
        outcome(client.call("embed.texts", { texts: ["a"] })),
        outcome(client.call("embed.texts", { texts: ["a"] })),
        outcome(client.call("embed.texts", { texts: ["a"], kind: "question" })),
      ]);
      assert.deepEqual(outcomes, ["ok", "ok", "embed_busy", "ok"]);
    } finally {
      await served.stop();
    }
  });

  test("with embed_question_worker false one worker serves both", async () => {
    const model = await testModel();
    const served = await serve({ ...embedGroup(model), embed_question_worker: false });
    try {
      assert.equal(workerPids(served).length, 1);
      const client = await served.client();
      const q = (await client.call("embed.texts", { texts: ["a"], kind: "question" })) as {
        vectors: number[][][];
      };
      assert.equal(q.vectors.length, 1);
    } finally {
      await served.stop();
    }
  });
});

describe("embed_memory_bytes at run time", () => {
  test("a worker above embed_memory_bytes after a batch exits and is restarted", async () => {
    const model = await testModel();
    // Above the start-up check's estimate (a 96 MiB floor, the model, a batch), below the
    // worker's real resident memory (about 114 MiB).
    const served = await serve({
      ...embedGroup(model),
      embed_memory_bytes: 101 * 1024 * 1024,
      embed_question_worker: false,
    });
    try {
      const client = await served.client();
      const answer = (await client.call("embed.texts", { texts: ["the store"] })) as {
        vectors: number[][][];
      };
      assert.equal(answer.vectors.length, 1);
      await until(
        "the worker's exit",
        () => served.logs().some((l) => l.msg === "embedding worker died; restarting"),
        RESTARTS,
      );
      const died = served.logs().find((l) => l.msg === "embedding worker died; restarting");
      assert.match(String(died!.reason), /exited with status 4/);
      assert.match(served.running.stderr(), /resident memory \d+ is above embed_memory_bytes/);
    } finally {
      await served.stop();
    }
  });
});
