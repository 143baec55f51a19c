/**
 * `npm run bench:workflows`: workflows end to end through the engine, the matcher and a real
 * `skein worker` process. The workload is the one the public durable-execution anchors use:
 * W workflows (after a warm-up), each M sequential no-op steps (`module` activities), C
 * workflows in flight (a closed loop: each finished workflow starts the next). C = 64
 * measures throughput; C = 1 measures the time per step. Every engine commit (one at a time,
 * carrying every event processed since the previous one) is one durable store transaction;
 * there is no per-activity sync.
 *
 * Prints workflows/s, activities/s, p50/p99 dispatch-to-completion latency, ms per step, and
 * the CPU seconds of the engine process and of each worker process.
 *
 * The store is the server's own SQLite persistence (`ThreadedSqliteStore`: its migrations,
 * WAL with synchronous = FULL, wal_autocheckpoint = 10000, the connection on a thread of
 * its own, as in `skein serve`), one transaction per engine
 * commit. The engine runs in this process (so dispatch-to-completion is stamped where the
 * engine offers and where results arrive); runs are started with `engine.start`, not over
 * HTTP, so the HTTP start path is not in these figures.
 *
 * Knobs (environment): BENCH_WORKFLOWS (10000), BENCH_STEPS (10), BENCH_WARMUP (500),
 * BENCH_SERIAL_WORKFLOWS (300), BENCH_WORKERS (1), BENCH_INPUT (each step's input
 * expression, `{}`: a JSON constant, which needs no evaluation; set an expression such as
 * `{ 'n': input }` to measure evaluation on the step path).
 */

import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { attemptKey } from "../src/protocol/attempt.ts";
import { parseDefinition } from "../src/workflow/definitions/index.ts";
import type { MatcherEvents } from "../src/workflow/engine/dispatcher.ts";
import { type Dispatcher, Engine, type RunState } from "../src/workflow/engine/index.ts";
import type { RunAppend } from "../src/workflow/engine/store.ts";
import { ThreadedSqliteStore } from "../src/workflow/persistence/sqlite/threaded-store.ts";
import { startWorkerEndpoint } from "../src/workflow/rpc/server.ts";
import { type Figures, knob, percentile, runBench } from "./harness.ts";
import { spawnNoopWorkers } from "./support/noop-workers.ts";
import { processCpuSeconds } from "./support/process-cpu.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = [
  "src/workflow/engine",
  "src/workflow/persistence/sqlite",
  "src/workflow/matching",
  "src/workflow/rpc",
  "src/worker",
];

const W = knob("BENCH_WORKFLOWS", 10_000, 50);
const M = knob("BENCH_STEPS", 10, 3);
const WARMUP = knob("BENCH_WARMUP", 500, 10);
const SERIAL = knob("BENCH_SERIAL_WORKFLOWS", 300, 10);
const WORKERS = knob("BENCH_WORKERS", 1, 1);
const INPUT = process.env.BENCH_INPUT ?? "{}";

const dir = await mkdtemp(join(tmpdir(), "skein-bench-workflows-"));
const database = await ThreadedSqliteStore.open(join(dir, "skein.db"));
const runs = database.workflows.runs;
/** The server's run store, counting commits. */
const store = {
  commits: 0,
  async commit(batch: readonly RunAppend[]) {
    await runs.commit(batch);
    this.commits++;
  },
  loadRunning: () => runs.loadRunning(),
  loadOutbox: () => runs.loadOutbox(),
};
const steps = Array.from(
  { length: M },
  (_, i) => `  - { id: s${i}, call: { action: noop, input: ${JSON.stringify(INPUT)} } }`,
);
const definition = parseDefinition(
  `name: bench\ntask_queue: q\nsteps:\n${steps.join("\n")}\n`,
  "yaml",
);

// Dispatch-to-completion latency: stamped where the engine offers and where results arrive.
const offeredAt = new Map<string, number>();
let latencies: number[] = [];
let onEnded: (runId: string, state: RunState) => void = () => {};
const engine = new Engine({
  store,
  definitions: async () => definition,
  onRunEnded: (runId, state) => onEnded(runId, state),
});
const events: MatcherEvents = {
  ...engine.matcherEvents,
  completed: (ref, output, ctx, receipt) => {
    const key = attemptKey(ref);
    const t = offeredAt.get(key);
    if (t !== undefined) {
      latencies.push(performance.now() - t);
      offeredAt.delete(key);
    }
    engine.matcherEvents.completed(ref, output, ctx, receipt);
  },
};
const endpoint = await startWorkerEndpoint("127.0.0.1:0", {
  verify: async () => ({ subject: "bench", worker: true, namespaces: "*" }),
  namespaceGate: async () => true,
  events,
  maxBacklogPerQueue: 1_000_000,
});
const timed: Dispatcher = {
  offer: (task) => {
    offeredAt.set(attemptKey(task.ref), performance.now());
    return endpoint.matcher.offer(task);
  },
  release: (ref, reason) => endpoint.matcher.release(ref, reason),
  flush: () => endpoint.matcher.flush(),
};
engine.attach(timed);

const workers = await spawnNoopWorkers({
  dir,
  port: endpoint.port,
  count: WORKERS,
  concurrency: 256,
  sessions: () => endpoint.matcher.stats().sessions,
});

/** Runs `total` workflows with `concurrency` in flight; resolves with the elapsed seconds. */
function closedLoop(total: number, concurrency: number): Promise<number> {
  return new Promise((done, fail) => {
    let started = 0;
    let finished = 0;
    const t0 = performance.now();
    const next = () => {
      started++;
      const runId = randomUUID();
      engine
        .start({ runId, workflowId: runId, namespace: "default", definition, inputJson: "{}" })
        .catch(fail);
    };
    onEnded = (_, state) => {
      if (state.status !== "Completed") return fail(new Error(`a run ended ${state.status}`));
      finished++;
      if (started < total) next();
      if (finished === total) done((performance.now() - t0) / 1000);
    };
    for (let i = 0; i < Math.min(concurrency, total); i++) next();
  });
}

function cpu(): Record<string, number> {
  const own = process.cpuUsage();
  const figures: Record<string, number> = { engine_cpu_s: (own.user + own.system) / 1e6 };
  workers.forEach((w, i) => {
    figures[`worker${i}_cpu_s`] = processCpuSeconds(w.pid!);
  });
  return figures;
}

async function measure(total: number, concurrency: number): Promise<Figures> {
  latencies = [];
  const before = cpu();
  const commitsBefore = store.commits;
  const seconds = await closedLoop(total, concurrency);
  const after = cpu();
  const figures: Figures = {
    workflows_per_s: Math.round(total / seconds),
    activities_per_s: Math.round((total * M) / seconds),
    ms_per_step: Number(((seconds * 1000) / (total * M)).toFixed(3)),
    p50_ms: Number(percentile(latencies, 50).toFixed(3)),
    p99_ms: Number(percentile(latencies, 99).toFixed(3)),
    commits: store.commits - commitsBefore,
  };
  for (const key of Object.keys(after))
    figures[key] = Number((after[key]! - before[key]!).toFixed(2));
  return figures;
}

await runBench("workflows", { measures: MEASURES }, [
  {
    name: `C=64, W=${W}, M=${M}, server SQLite store (WAL, synchronous=FULL)`,
    async run() {
      await closedLoop(WARMUP, 64);
      return measure(W, 64);
    },
  },
  {
    name: `C=1, W=${SERIAL}, M=${M}`,
    async run() {
      await closedLoop(Math.min(20, SERIAL), 1);
      return measure(SERIAL, 1);
    },
  },
]);

for (const w of workers) w.kill();
engine.close();
await endpoint.close();
await database.close();
await rm(dir, { recursive: true, force: true });
