/**
 * `npm run bench:dispatch`: activity attempts per second through the matcher and real
 * `skein worker` processes running a no-op `module` action, with C attempts kept in flight
 * (a closed loop: each result offers the next attempt). C = 64 measures throughput; C = 1
 * measures the per-attempt round trip (dispatch to completion callback) as p50/p99. Also
 * reports the CPU seconds of the server process and of each worker process.
 *
 * Knobs (environment): BENCH_TASKS (default 20000), BENCH_WARMUP (2000), BENCH_WORKERS (1),
 * BENCH_LATENCY_TASKS (3000).
 */

import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MatcherEvents } from "../src/workflow/engine/dispatcher.ts";
import { startWorkerEndpoint } from "../src/workflow/rpc/server.ts";
import { type Figures, knob, percentile, runBench } from "./harness.ts";
import { spawnNoopWorkers } from "./support/noop-workers.ts";
import { processCpuSeconds } from "./support/process-cpu.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = ["src/workflow/matching", "src/workflow/rpc", "src/worker", "src/protocol"];

const TASKS = knob("BENCH_TASKS", 20_000, 200);
const WARMUP = knob("BENCH_WARMUP", 2_000, 50);
const WORKERS = knob("BENCH_WORKERS", 1, 1);
const LATENCY_TASKS = knob("BENCH_LATENCY_TASKS", 3_000, 50);

let onResult: () => void = () => {};
// Each result is recorded at once: the matcher acknowledges it to the worker when told so.
const events: MatcherEvents = {
  completed: (_ref, _output, _ctx, receipt) => {
    receipt.recorded();
    onResult();
  },
  failed: (_ref, _failure, _ctx, receipt) => {
    receipt.recorded();
    onResult();
  },
};

const endpoint = await startWorkerEndpoint("127.0.0.1:0", {
  verify: async () => ({ subject: "bench", worker: true, namespaces: "*" }),
  namespaceGate: async () => true,
  events,
  maxBacklogPerQueue: 1_000_000,
});

const dir = await mkdtemp(join(tmpdir(), "skein-bench-dispatch-"));
const workers = await spawnNoopWorkers({
  dir,
  port: endpoint.port,
  count: WORKERS,
  concurrency: 64,
  sessions: () => endpoint.matcher.stats().sessions,
});

const runId = randomUUID();
let activity = 1;
function offerOne(): void {
  endpoint.matcher.offer({
    ref: { run_id: runId, activity_id: activity++, attempt: 1 },
    namespace: "default",
    taskQueue: "q",
    workflowId: runId,
    action: "noop",
    inputJson: "{}",
    startToCloseMs: 0,
    heartbeatMs: 0,
  });
}

/** Runs `total` attempts with `concurrency` in flight; resolves with per-attempt latencies. */
function closedLoop(
  total: number,
  concurrency: number,
): Promise<{ seconds: number; latencies: number[] }> {
  return new Promise((done) => {
    const started: number[] = [];
    const latencies: number[] = [];
    let offered = 0;
    let finished = 0;
    const t0 = performance.now();
    const next = () => {
      started.push(performance.now());
      offered++;
      offerOne();
    };
    onResult = () => {
      latencies.push(performance.now() - started[finished]!);
      finished++;
      if (offered < total) next();
      if (finished === total) done({ seconds: (performance.now() - t0) / 1000, latencies });
    };
    for (let i = 0; i < Math.min(concurrency, total); i++) next();
  });
}

function cpu(): Figures {
  const own = process.cpuUsage();
  const figures: Figures = { server_cpu_s: (own.user + own.system) / 1e6 };
  workers.forEach((w, i) => {
    figures[`worker${i}_cpu_s`] = processCpuSeconds(w.pid!);
  });
  return figures;
}

function withLatency(figures: Figures, latencies: number[]): Figures {
  return {
    ...figures,
    p50_ms: Number(percentile(latencies, 50).toFixed(3)),
    p99_ms: Number(percentile(latencies, 99).toFixed(3)),
  };
}

await runBench("dispatch", { measures: MEASURES }, [
  {
    name: `C=64, ${TASKS} no-op module attempts, ${WORKERS} worker process(es)`,
    async run() {
      await closedLoop(WARMUP, 64);
      const before = cpu();
      const { seconds, latencies } = await closedLoop(TASKS, 64);
      const after = cpu();
      const figures: Figures = { attempts_per_s: Math.round(TASKS / seconds) };
      for (const key of Object.keys(after))
        figures[key] = Number(((after[key] as number) - (before[key] as number)).toFixed(2));
      return withLatency(figures, latencies);
    },
  },
  {
    name: `C=1, ${LATENCY_TASKS} attempts (round trip per attempt)`,
    async run() {
      await closedLoop(Math.min(200, LATENCY_TASKS), 1);
      const { seconds, latencies } = await closedLoop(LATENCY_TASKS, 1);
      return withLatency({ attempts_per_s: Math.round(LATENCY_TASKS / seconds) }, latencies);
    },
  },
]);

for (const w of workers) w.kill();
await endpoint.close();
await rm(dir, { recursive: true, force: true });
