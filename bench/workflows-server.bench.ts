/**
 * `npm run bench:workflows` (second part): the same workload through the real server. A
 * `skein serve` process (SQLite, the server's store) and a `skein worker module` process;
 * the definition is registered and every run started over HTTP (`POST /workflows/start`),
 * M sequential no-op steps each.
 *
 * - Throughput, closed loop (the anchors' shape): C = 64 workflows in flight, each lane
 *   starting a run, awaiting its end with one describe that waits (`wait_ms`), then
 *   starting the next; W × M activities over the wall time of the W runs.
 * - Throughput, burst: W starts are sent with 64 requests in flight, so every run is in
 *   flight at once; the figure is W × M activities over the time from the first start to
 *   the last durable run end (read from the runs' `ended_at`). Both count the HTTP start
 *   path, the engine, the matcher, the worker and every durable commit.
 * - Per step: C = 1, each run started once the previous one ended (learned with one
 *   describe that waits for the end: `wait_ms`); ms per step is the run's durable
 *   start-to-end time over M, and client ms per step the client's wall time from sending
 *   the start to the end's answer over M (the HTTP start and describe included).
 * - Dispatch to completion: from each run's history (`ActivityScheduled.at` to
 *   `ActivityCompleted.at`, whole milliseconds as stored), over a sample of runs.
 * - CPU seconds of the server, the worker and this client process.
 *
 * The loops' starts and describes go through `JsonClient` (support/http-client.ts:
 * `node:http`, keep-alive, a socket per lane), as Restate's loop does in
 * support/restate-closed-loop.ts, so the client takes as little of the machine's CPU from
 * the servers as it can, and the same for both.
 *
 * In the burst the bench learns that every run ended by reading `POST /workflows/list`
 * every 50 ms (one request, not one per run).
 *
 * Knobs: BENCH_WORKFLOWS (10000), BENCH_STEPS (10), BENCH_WARMUP (500),
 * BENCH_SERIAL_WORKFLOWS (200), BENCH_POSTGRES_URL (run on PostgreSQL storage instead, in a
 * fresh schema dropped afterwards: `postgres://postgres@127.0.0.1:5432/test` here).
 *
 * For a closer look at the server (none of these changes a figure's meaning):
 * SKEIN_BENCH_SERVER_NODE_ARGS puts Node flags on the server's command line (V8's heap
 * flags that NODE_OPTIONS refuses, `--min-semi-space-size=32` say);
 * SKEIN_BENCH_SERVER_NODE_OPTIONS adds Node options for the server process alone (for one,
 * `--import=bench/support/heap-sampling.ts` with SKEIN_HEAP_SAMPLES to sample its
 * allocations; `--trace-gc` itself is not allowed in NODE_OPTIONS, a preload calling
 * `v8.setFlagsFromString` is); SKEIN_BENCH_SERVER_STDOUT saves what the server printed, and
 * SKEIN_BENCH_SERVER_METRICS its `/metrics` text after the last case (the group commits'
 * sizes and durations among them).
 *
 * Flags (`npm run bench:workflows-server -- FLAGS`):
 * - `--rounds N`: every case N times, the cases interleaved round by round (so a change in
 *   the machine's load falls on all of them alike); the table shows each figure's median
 *   over the rounds, in the same format as one round, and the lines after it the spread
 *   (min, median, max) of the closed loop's steps/s and server µs per step and of the
 *   C = 1 figures.
 * - `--profile`: the server runs with `--cpu-prof` into a directory the bench prints, only
 *   the closed loop runs, and the bench prints where a step's server CPU went by category
 *   (bench/support/cpu-profile.ts) over the measured loop (the warm-up excluded). Its
 *   figures go to that directory, not bench/results (the profiler costs CPU too).
 */

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { ACTIVITIES } from "../test/support/worker-endpoint.ts";
import {
  adminToken,
  call,
  SKEIN_BIN,
  startServe,
  tempDir,
  writeConfig,
} from "../test/workflow/support/server.ts";
import {
  type BenchCase,
  type Figures,
  formatTable,
  knob,
  percentile,
  runBench,
} from "./harness.ts";
import { CATEGORIES, summarizeProfile, type ThreadCpu, threadCpu } from "./support/cpu-profile.ts";
import { JsonClient } from "./support/http-client.ts";
import { processCpuSeconds, processMinorFaults } from "./support/process-cpu.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = ["src/workflow", "src/worker", "src/protocol", "bin/skein.ts"];

const W = knob("BENCH_WORKFLOWS", 10_000, 50);
const M = knob("BENCH_STEPS", 10, 3);
const WARMUP = knob("BENCH_WARMUP", 500, 10);
const SERIAL = knob("BENCH_SERIAL_WORKFLOWS", 200, 5);

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "1" },
    profile: { type: "boolean", default: false },
    smoke: { type: "boolean", default: false },
  },
});
const ROUNDS = Number(flags.rounds);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1)
  throw new Error(`--rounds ${flags.rounds}: not a count`);
const PROFILE = flags.profile ? mkdtempSync(join(tmpdir(), "skein-profile-")) : undefined;
if (PROFILE !== undefined) {
  process.env.SKEIN_BENCH_RESULTS = PROFILE;
  process.stderr.write(`  profiling the server into ${PROFILE}\n`);
}

const POSTGRES = process.env.BENCH_POSTGRES_URL;
const schema = `skein_bench_${randomBytes(6).toString("hex")}`;
const storage =
  POSTGRES === undefined ? "" : `[storage]\nurl = "${POSTGRES}"\nschema = "${schema}"\n`;
const backend = POSTGRES === undefined ? "SQLite" : "PostgreSQL";

/** Node options for the server alone: the profiler's, and SKEIN_BENCH_SERVER_NODE_OPTIONS. */
function serverNodeOptions(): Record<string, string> {
  const extra = [
    process.env.NODE_OPTIONS ?? "",
    PROFILE === undefined ? "" : `--cpu-prof --cpu-prof-dir=${PROFILE}`,
    process.env.SKEIN_BENCH_SERVER_NODE_OPTIONS ?? "",
  ].join(" ");
  return extra.trim() === "" ? {} : { NODE_OPTIONS: extra };
}

const dir = await tempDir();
const server = await startServe(
  await writeConfig(dir.path, `${storage}[namespaces]\ndefault = "default"`),
  [],
  serverNodeOptions(),
  (process.env.SKEIN_BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== ""),
);
const token = await adminToken(dir.path);
const steps = Array.from(
  { length: M },
  (_, i) => `  - { id: s${i}, call: { action: noop, input: "{}" } }`,
);
const registered = await call(server.url, "POST", "/workflows/definitions", {
  token,
  body: { definition: `name: bench\ntask_queue: q\nsteps:\n${steps.join("\n")}\n` },
});
if (registered.status !== 200) throw new Error(JSON.stringify(registered.body));

const doc = join(dir.path, "worker.json");
await writeFile(
  doc,
  JSON.stringify({
    name: "bench",
    task_queue: "q",
    actions: { noop: { module: ACTIVITIES, export: "noop" } },
  }),
);
await writeFile(join(dir.path, "worker.token"), `${token}\n`, { mode: 0o600 });
const worker = spawn(
  process.execPath,
  [
    SKEIN_BIN,
    "worker",
    "module",
    doc,
    "--endpoint",
    server.grpc!,
    "--concurrency",
    "256",
    "--token-file",
    join(dir.path, "worker.token"),
  ],
  { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, SKEIN_LOG_LEVEL: "warn" } },
);

/** The loops' client (bench/support/http-client.ts): a socket per lane, kept alive. */
const client = new JsonClient(server.url, 128, { authorization: `Bearer ${token}` });

async function start(): Promise<string> {
  const r = await client.post("/workflows/start", { name: "bench" });
  if (r.status !== 200) throw new Error(`start: ${JSON.stringify(r.body)}`);
  return r.body.workflow_id;
}

/** The run's record; with `waitMs`, once it has ended (the server's long poll). */
async function describe(workflowId: string, waitMs = 0) {
  const r = await client.post("/workflows/describe", { workflow_id: workflowId, wait_ms: waitMs });
  return r.body.run as { status: string; started_at: string; ended_at: string | null };
}

/** Waits until no run is Running. */
async function drained(): Promise<void> {
  for (;;) {
    const r = await call(server.url, "POST", "/workflows/list", {
      token,
      body: { status: "Running", limit: 1 },
    });
    if (r.body.runs.length === 0) return;
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** Sends `total` starts with `concurrency` requests in flight; returns the workflow ids. */
async function startMany(total: number, concurrency: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, total) }, async () => {
      while (next < total) {
        next++;
        ids.push(await start());
      }
    }),
  );
  return ids;
}

/** C lanes, each starting a run and awaiting its end before the next; returns the ids. */
async function closedLoop(total: number, concurrency: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, total) }, async () => {
      while (next < total) {
        next++;
        const id = await start();
        ids.push(id);
        const run = await describe(id, 60_000);
        if (run.status !== "Completed") throw new Error(`run ${id} is ${run.status}`);
      }
    }),
  );
  return ids;
}

function cpu(): Record<string, number> {
  const own = process.cpuUsage();
  return {
    server_cpu_s: processCpuSeconds(server.child.pid!),
    worker_cpu_s: processCpuSeconds(worker.pid!),
    client_cpu_s: (own.user + own.system) / 1e6,
  };
}

function cpuDelta(before: Record<string, number>, after: Record<string, number>): Figures {
  const out: Figures = {};
  for (const key of Object.keys(after)) out[key] = Number((after[key]! - before[key]!).toFixed(2));
  return out;
}

/** Dispatch-to-completion latencies (ms, as stored) of a sample of runs. */
async function latencies(ids: readonly string[]): Promise<number[]> {
  const out: number[] = [];
  for (const id of ids) {
    const r = await call(server.url, "POST", "/workflows/history", {
      token,
      body: { workflow_id: id },
    });
    const scheduled = new Map<number, number>();
    for (const e of r.body.events) {
      if (e.type === "ActivityScheduled")
        scheduled.set(e.activity_id, Math.max(e.at, e.dispatch_at));
      if (e.type === "ActivityCompleted") out.push(e.at - scheduled.get(e.activity_id)!);
    }
  }
  return out;
}

/** The measured closed loop's window (µs, monotonic clock), for the profile. */
let loopWindow = { from: 0, to: 0 };
/** The server's threads' CPU over that window (profile mode only). */
let loopThreads: ThreadCpu = { main: 0, sqlite: 0, sqliteKernel: 0, v8: 0, rest: 0, profiler: 0 };
const now = () => Number(process.hrtime.bigint() / 1000n);

const cases: BenchCase[] = [
  {
    name: `through skein serve: C=64 workflows in flight (closed loop), W=${W}, M=${M}, ${backend}`,
    async run() {
      await closedLoop(WARMUP, 64);
      const before = cpu();
      const threadsBefore = threadCpu(server.child.pid!);
      const faultsBefore = processMinorFaults(server.child.pid!);
      const from = now();
      const t0 = performance.now();
      const ids = await closedLoop(W, 64);
      const seconds = (performance.now() - t0) / 1000;
      const after = cpu();
      const faults = processMinorFaults(server.child.pid!) - faultsBefore;
      process.stderr.write(`  server page faults per step: ${(faults / (W * M)).toFixed(3)}\n`);
      loopWindow = { from, to: now() };
      const threadsAfter = threadCpu(server.child.pid!);
      loopThreads = {
        main: threadsAfter.main - threadsBefore.main,
        sqlite: threadsAfter.sqlite - threadsBefore.sqlite,
        sqliteKernel: threadsAfter.sqliteKernel - threadsBefore.sqliteKernel,
        v8: threadsAfter.v8 - threadsBefore.v8,
        rest: threadsAfter.rest - threadsBefore.rest,
        profiler: threadsAfter.profiler - threadsBefore.profiler,
      };
      const lat = await latencies(ids.slice(-100));
      return {
        workflows_per_s: Math.round(W / seconds),
        activities_per_s: Math.round((W * M) / seconds),
        p50_ms: percentile(lat, 50),
        p99_ms: percentile(lat, 99),
        ...cpuDelta(before, after),
      };
    },
  },
  {
    name: `through skein serve: burst, all W runs in flight (64 starts at a time), W=${W}, M=${M}, ${backend}`,
    async run() {
      const before = cpu();
      const t0 = Date.now();
      const ids = await startMany(W, 64);
      const startsDone = Date.now();
      await drained();
      const after = cpu();
      // The last durable end among the runs, from their records.
      let lastEnd = 0;
      for (const id of ids.slice(-200)) {
        lastEnd = Math.max(lastEnd, Date.parse((await describe(id)).ended_at!));
      }
      const seconds = (lastEnd - t0) / 1000;
      const lat = await latencies(ids.slice(-100));
      return {
        workflows_per_s: Math.round(W / seconds),
        activities_per_s: Math.round((W * M) / seconds),
        starts_per_s: Math.round(W / ((startsDone - t0) / 1000)),
        p50_ms: percentile(lat, 50),
        p99_ms: percentile(lat, 99),
        ...cpuDelta(before, after),
      };
    },
  },
  {
    name: `through skein serve: C=1, W=${SERIAL}, M=${M}, ${backend}`,
    async run() {
      const before = cpu();
      const perStep: number[] = [];
      const ids: string[] = [];
      const t0 = performance.now();
      for (let i = 0; i < SERIAL; i++) {
        const id = await start();
        ids.push(id);
        const run = await describe(id, 60_000);
        if (run.status !== "Completed") throw new Error(`run ${id} is ${run.status}`);
        perStep.push((Date.parse(run.ended_at!) - Date.parse(run.started_at)) / M);
      }
      // As the client sees it: the start request sent to the end answered, over M steps.
      const clientMsPerStep = (performance.now() - t0) / SERIAL / M;
      const after = cpu();
      const lat = await latencies(ids.slice(-50));
      const mean = perStep.reduce((a, b) => a + b, 0) / perStep.length;
      return {
        ms_per_step: Number(mean.toFixed(3)),
        client_ms_per_step: Number(clientMsPerStep.toFixed(3)),
        p50_ms: percentile(lat, 50),
        p99_ms: percentile(lat, 99),
        ...cpuDelta(before, after),
      };
    },
  },
];

/** The median of a figure over rounds (numbers), or the first round's value. */
function median(values: readonly (number | string | undefined)[]): number | string | undefined {
  const numbers = values.filter((v): v is number => typeof v === "number");
  if (numbers.length < values.length) return values[0];
  const sorted = [...numbers].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Server CPU µs per step of a closed-loop or C = 1 row. */
function serverMicrosPerStep(f: Figures, workflows: number): number {
  return Math.round(((f.server_cpu_s as number) * 1e6) / (workflows * M));
}

if (PROFILE !== undefined) {
  await runBench("workflows-server", { measures: MEASURES }, [cases[0]!]);
  client.close();
  worker.kill();
  // A graceful stop: the server writes its profiles as it exits.
  await server.stop();
  // The window beside the profiles, so a closer look at them can take the same samples.
  await writeFile(join(PROFILE, "window.json"), JSON.stringify(loopWindow));
  const { main, threads } = summarizeProfile(PROFILE, loopWindow.from, loopWindow.to, loopThreads);
  const steps = W * M;
  const us = (micros: number) => Number((micros / steps).toFixed(1));
  const total = CATEGORIES.reduce((sum, c) => sum + main[c] + threads[c], 0);
  const rows: { case: string; figures: Figures }[] = CATEGORIES.map((c) => ({
    case: c,
    figures: {
      main_thread_us: us(main[c]),
      other_threads_us: us(threads[c]),
      us_per_step: us(main[c] + threads[c]),
      share: `${((100 * (main[c] + threads[c])) / total).toFixed(1)}%`,
    },
  }));
  rows.push({
    case: "total",
    figures: {
      main_thread_us: us(loopThreads.main * 1e6),
      other_threads_us: us((loopThreads.sqlite + loopThreads.v8 + loopThreads.rest) * 1e6),
      us_per_step: us(total),
      share: "100%",
    },
  });
  process.stdout.write(
    `SQLite thread: ${us(loopThreads.sqlite * 1e6)} µs per step, of which in the kernel ` +
      `${us(loopThreads.sqliteKernel * 1e6)}; the profiler's own threads (not counted): ` +
      `${us(loopThreads.profiler * 1e6)}\n`,
  );
  process.stdout.write(
    `${formatTable(`where a closed-loop step's server CPU goes (µs per step; profile in ${PROFILE})`, rows)}\n`,
  );
} else if (ROUNDS === 1) {
  await runBench("workflows-server", { measures: MEASURES }, cases);
} else {
  const rounds: Figures[][] = cases.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, c] of cases.entries()) {
      rounds[i]!.push(await c.run());
      process.stderr.write(`  round ${r + 1}/${ROUNDS}: ${c.name}: done\n`);
    }
  }
  await runBench(
    "workflows-server",
    { measures: MEASURES },
    cases.map((c, i) => ({
      name: c.name,
      run: () => {
        const keys = [...new Set(rounds[i]!.flatMap((f) => Object.keys(f)))];
        return Object.fromEntries(
          keys.map((k) => [k, median(rounds[i]!.map((f) => f[k]))]),
        ) as Figures;
      },
    })),
  );
  const spread = (label: string, values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    process.stdout.write(
      `spread over ${ROUNDS} rounds: ${label}: min ${sorted[0]}, ` +
        `median ${Number((median(sorted) as number).toFixed(3))}, ` +
        `max ${sorted.at(-1)} (${values.join(", ")})\n`,
    );
  };
  const [loop, , serial] = rounds;
  spread(
    "closed loop steps/s",
    loop!.map((f) => f.activities_per_s as number),
  );
  spread(
    "closed loop server µs/step",
    loop!.map((f) => serverMicrosPerStep(f, W)),
  );
  spread(
    "C=1 ms/step",
    serial!.map((f) => f.ms_per_step as number),
  );
  spread(
    "C=1 client ms/step",
    serial!.map((f) => f.client_ms_per_step as number),
  );
}

if (process.env.SKEIN_BENCH_SERVER_METRICS !== undefined) {
  const r = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  await writeFile(process.env.SKEIN_BENCH_SERVER_METRICS, await r.text());
}
if (PROFILE === undefined) {
  client.close();
  worker.kill();
  await server.stop();
}
// What the server printed (a --trace-gc, for one), kept when asked for.
if (process.env.SKEIN_BENCH_SERVER_STDOUT !== undefined) {
  await writeFile(process.env.SKEIN_BENCH_SERVER_STDOUT, server.stdout());
}
await dir.remove();
if (POSTGRES !== undefined) {
  const client = new pg.Client({ connectionString: POSTGRES });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}
