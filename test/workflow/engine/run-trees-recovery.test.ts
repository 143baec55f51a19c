// Run trees survive SIGKILL of the engine process: a durable timer, a signal (sent before
// its wait is reached), a child run awaited by its parent, and outbox members, each across a
// kill and a restart on the same store. The engine runs in its own process (the fixture);
// workers are real `skein worker` processes.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { HistoryEvent } from "../../../src/workflow/engine/index.ts";
import type { OutboxRow } from "../../../src/workflow/engine/store.ts";
import { until } from "../../support/until.ts";
import {
  ACTIVITIES,
  freePort,
  spawnWorker,
  tempDir,
  tokenFile,
  writeJson,
} from "../../support/worker-endpoint.ts";

const SERVER = fileURLToPath(new URL("../../fixtures/engine-server.ts", import.meta.url));

interface Server {
  readonly child: ChildProcess;
  out(): string;
  kill(): Promise<void>;
}

/** Sends `request` to the server's stdin and returns the JSON of its answer line. */
async function ask<T>(server: Server, request: string): Promise<T> {
  const from = server.out().length;
  server.child.stdin!.write(`${request}\n`);
  const line = await until(request, () =>
    server
      .out()
      .slice(from)
      .split("\n")
      .slice(0, -1)
      .find((l) => l.startsWith(`${request} `)),
  );
  return JSON.parse(line.slice(request.length + 1)) as T;
}

function startServer(args: string[]): Server {
  const child = spawn(process.execPath, [SERVER, ...args], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    out += chunk;
  });
  return {
    child,
    out: () => out,
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.on("exit", r));
      child.kill("SIGKILL");
      await exited;
    },
  };
}

const count = (history: readonly HistoryEvent[], type: HistoryEvent["type"]) =>
  history.filter((e) => e.type === type).length;

describe("run trees survive SIGKILL of the engine process", () => {
  test("a timer, a signal sent before its wait, a child await and outbox members", async () => {
    const dir = await tempDir();
    const port = await freePort();
    const storePath = join(dir, "skein.db");
    const root = join(dir, "root.yaml");
    const kid = join(dir, "kid.yaml");
    await writeFile(
      root,
      `name: durable
task_queue: q
steps:
  - { id: nap, sleep: { duration_ms: 600 } }
  - { id: go, wait: { signal: go } }
  - { id: child, child: { workflow: kid, input: "{ 'n': steps.go.n }" } }
output: "{ 'result': steps.child }"
`,
    );
    await writeFile(
      kid,
      `name: kid
task_queue: q
steps:
  - id: each
    collect:
      items: "[1, 2, 3, 4, 5, 6]"
      step: { id: one, call: { action: inc, input: "{ 'n': input.n + item }" } }
output: "$sum(steps.each.n)"
`,
    );
    const runId = randomUUID();
    const args = [
      "--port",
      String(port),
      "--store",
      storePath,
      "--definition",
      root,
      "--library",
      kid,
      "--outbox",
      "2",
    ];
    const servers: Server[] = [];
    const serve = async (extra: string[] = []) => {
      const s = startServer([...args, ...extra]);
      servers.push(s);
      await until("ready", () => s.out().includes("ready"));
      return s;
    };
    // The running server owns the database (SQLite, locked to it): storage is read through it.
    const store = {
      history: (id: string) => ask<HistoryEvent[]>(servers.at(-1)!, `history ${id}`),
      outbox: () => ask<OutboxRow[]>(servers.at(-1)!, "outbox"),
    };
    let worker: ReturnType<typeof spawnWorker> | undefined;
    try {
      // 1. The run starts and sleeps; the engine dies with the timer pending.
      const a = await serve(["--start", runId]);
      await until(
        "the sleep's timer",
        async () => count(await store.history(runId), "TimerStarted") === 1,
      );
      await a.kill();

      // 2. Restarted; the signal arrives while the run still sleeps (before its wait).
      const b = await serve();
      b.child.stdin!.write(`signal ${runId} go {"n":10}\n`);
      await until("the signal recorded", () => b.out().includes(`signalled ${runId} true`));
      await b.kill();

      // 3. Restarted with no worker: the timer fires, the wait takes the early signal, the
      // child starts and its members wait in the outbox; the engine dies again.
      const c = await serve();
      let childId: string | undefined;
      await until("the child's members in the outbox", async () => {
        const started = (await store.history(runId)).find((e) => e.type === "ChildStarted");
        childId = started?.type === "ChildStarted" ? started.child_run_id : undefined;
        return (
          childId !== undefined &&
          count(await store.history(childId), "ActivityScheduled") === 6 &&
          (await store.outbox()).filter((r) => r.state === "claimed").length === 2
        );
      });
      await c.kill();

      // 4. Restarted with a worker: the child's members run, the child completes, and the
      // parent takes its result.
      const d = await serve();
      worker = spawnWorker([
        "module",
        await writeJson(dir, "worker.json", {
          name: "w",
          task_queue: "q",
          actions: { inc: { module: ACTIVITIES, export: "inc" } },
        }),
        "--endpoint",
        `127.0.0.1:${port}`,
        "--token-file",
        await tokenFile(dir, "any"),
      ]);
      await until("the run's end", () => d.out().includes(`ended ${runId}`), { timeoutMs: 30_000 });
      assert.match(d.out(), new RegExp(`ended ${runId} Completed`));

      const history = await store.history(runId);
      const end = history.at(-1)!;
      // inc(10 + i) for i in 1..6 = 12..17, summed: 87.
      assert.deepEqual(end.type === "RunCompleted" && JSON.parse(end.output_json), {
        result: 87,
      });
      assert.equal(count(history, "TimerFired"), 1, "the timer fired once");
      assert.equal(count(history, "SignalReceived"), 1, "the signal is recorded once");
      assert.equal(count(history, "ChildStarted"), 1, "one child, never started twice");
      assert.equal(count(history, "ChildEnded"), 1);
      const child = await store.history(childId!);
      assert.equal(count(child, "ActivityCompleted"), 6, "each member completed once");
      assert.equal(child.at(-1)?.type, "RunCompleted");
      assert.ok((await store.outbox()).every((r) => r.state === "done"));
    } finally {
      worker?.kill();
      await worker?.exited;
      for (const s of servers) await s.kill();
    }
  });
});
