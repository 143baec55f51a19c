/**
 * `npm run bench:store`: the store engine and its socket on the data shape (JSON
 * records of about 200 bytes under keys like doc-000123, commits of 1000 records).
 * Figures: batched and single-record commit throughput and latency, in-process and socket
 * gets, branch creation on the largest branch, nodes loaded by changes.list for d changes
 * on branches of several sizes (it should grow with d·log n, not n; its time is the median
 * of several diffs), and batched puts
 * against raw LMDB puts of the same bytes, and a retention release whose node sweep runs
 * at once or in steps (as served: the longest event-loop pause is what a request may
 * wait), and branches.merge of d = 10, 1,000 and 10,000 changes on each side of the largest
 * branch (ms and nodes loaded; the goal is under 10 ms for d = 10 on 1,000,000 records)
 * with a dry-run preview of 100 conflicts. The pipelined cases load the same records with IN_FLIGHT commits in flight
 * (in-process through `putPipelined`, and over the socket from one client), so each
 * commit's CPU work overlaps the flush of the ones before; they run before the
 * synchronous load, on stores of their own that are closed after, so neither pays for the
 * other's heap. SKEIN_BENCH_RECORDS sets the largest branch (default 1,000,000),
 * SKEIN_BENCH_IN_FLIGHT the commits in flight (default 4).
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { open } from "lmdb";
import { StoreClient } from "../src/store/client/client.ts";
import { createStore, ENGINE_DEFAULTS, openStore, type Store } from "../src/store/engine/index.ts";
import { startStoreServer } from "../src/store/transport/server.ts";
import { type BenchCase, knob, percentile, runBench } from "./harness.ts";
import { changesSince, key, record } from "./support/store-shape.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = [
  "src/store/engine",
  "src/store/tree",
  "src/store/codec",
  "src/store/lmdb",
  "src/store/transport",
];

const N = knob("SKEIN_BENCH_RECORDS", 1_000_000, 2_000);
const BATCH = 1000;
/** Commits in flight in the pipelined cases. */
const IN_FLIGHT = knob("SKEIN_BENCH_IN_FLIGHT", 4, 4);
/** Loops of the latency cases (gets, single commits, branch creations), as a share of normal. */
const SCALE = knob("BENCH_SCALE", 1, 0.01);
const n = (count: number) => Math.max(2, Math.round(count * SCALE));
/** The retention cases' store: records, and rewrites of 1000 of them. */
const CHURN_RECORDS = knob("BENCH_CHURN_RECORDS", 20_000, 2_000);
const CHURN_ROUNDS = knob("BENCH_CHURN_ROUNDS", 40, 4);
/** Records loaded over the socket (the client's encoding shares the CPU with the server). */
const SOCKET_RECORDS = Math.min(N, 200_000);
const SIZES = [10_000, 100_000, N].filter((n, i, all) => n <= N && all.indexOf(n) === i);

const root = mkdtempSync(join(tmpdir(), "skein-bench-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

function seconds(start: number): number {
  return (performance.now() - start) / 1000;
}

async function newStore(name: string): Promise<Store> {
  const dir = join(root, name);
  await createStore(dir, { shards: 4, cacheBytesTotal: 512 << 20, executorThreads: 2 });
  return openStore({
    dataDir: dir,
    branchCacheBytesPerShard: 128 << 20,
    maxPage: 1000,
    ...ENGINE_DEFAULTS,
  });
}

/** Serves `store` on a socket in the bench directory, with one client connected. */
async function serve(store: Store, name: string, maxFrame: number) {
  const socketPath = join(root, name);
  const server = await startStoreServer(store, {
    socketPath,
    maxFrame,
    maxClients: 4,
    timeoutMs: 10_000,
  });
  const client = await StoreClient.connect(socketPath, { maxFrame });
  return { server, client, socketPath };
}

/** The records [start, min(to, start + BATCH)). */
function batch(start: number, to: number): { key: string; value: unknown }[] {
  const records = [];
  for (let i = start; i < Math.min(to, start + BATCH); i++)
    records.push({ key: key(i), value: record(i) });
  return records;
}

/** Loads records [from, to) into a branch in commits of BATCH; returns per-commit ms. */
function load(
  store: Store,
  where: { collection: string; branch: string },
  from: number,
  to: number,
): number[] {
  const latencies: number[] = [];
  for (let start = from; start < to; start += BATCH) {
    const records = batch(start, to);
    const t = performance.now();
    store.put(where, records);
    latencies.push(performance.now() - t);
  }
  return latencies;
}

/**
 * Loads records [from, to) in commits of BATCH with `depth` commits in flight, each lane
 * sending its next batch when its previous one is durable; returns per-commit ms (from
 * handing the batch over to its durable receipt).
 */
async function loadInFlight(
  put: (records: { key: string; value: unknown }[]) => Promise<unknown>,
  from: number,
  to: number,
  depth: number,
): Promise<number[]> {
  const latencies: number[] = [];
  let next = from;
  const lane = async () => {
    while (next < to) {
      const start = next;
      next += BATCH;
      const records = batch(start, to);
      const t = performance.now();
      await put(records);
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: depth }, lane));
  return latencies;
}

/** Throughput and commit latency figures of a load, against raw LMDB. */
function loadFigures(records: number, start: number, latencies: number[], cpu: NodeJS.CpuUsage) {
  const perS = Math.round(records / seconds(start));
  const used = process.cpuUsage(cpu);
  return {
    puts_per_s: perS,
    commit_p50_ms: percentile(latencies, 50),
    commit_p99_ms: percentile(latencies, 99),
    ratio_to_raw: Number((perS / rawPutsPerS).toFixed(3)),
    // CPU (user + system, every thread of the process) per commit: the part of a commit
    // that is not waiting on the disk flushes, and steadier than wall time on a shared
    // machine.
    cpu_ms_per_commit: Number(((used.user + used.system) / 1000 / latencies.length).toFixed(2)),
  };
}

// Assigned by the load case, or by bigStore() when that case was filtered out.
let big = undefined as unknown as Store;
const main = { collection: "bench", branch: "main" };
let rawPutsPerS = 0;

const cases: BenchCase[] = [
  {
    name: "raw lmdb (sync commits of 1000)",
    run() {
      const db = open({
        path: join(root, "raw"),
        noSync: false,
        overlappingSync: false,
        compression: false,
      });
      const count = Math.min(N, 200_000);
      const start = performance.now();
      for (let b = 0; b < count; b += BATCH) {
        db.transactionSync(() => {
          for (let i = b; i < b + BATCH; i++) db.putSync(key(i), JSON.stringify(record(i)));
        });
      }
      rawPutsPerS = Math.round(count / seconds(start));
      const t = performance.now();
      for (let i = 0; i < count; i++) db.get(key((i * 7919) % count));
      const gets = Math.round(count / seconds(t));
      void db.close();
      return { records: count, puts_per_s: rawPutsPerS, gets_per_s: gets };
    },
  },
  {
    name: `pipelined batched puts (${N.toLocaleString("en-US")} records, ${IN_FLIGHT} commits in flight)`,
    async run() {
      const store = await newStore("pipelined");
      store.createCollection("bench");
      const cpu = process.cpuUsage();
      const start = performance.now();
      const latencies = await loadInFlight(
        (records) => store.putPipelined(main, records),
        0,
        N,
        IN_FLIGHT,
      );
      const figures = loadFigures(N, start, latencies, cpu);
      await store.close();
      return figures;
    },
  },
  {
    name: `pipelined batched puts over the socket (${SOCKET_RECORDS.toLocaleString("en-US")} records, ${IN_FLIGHT} in flight, one client)`,
    async run() {
      const store = await newStore("socket-load");
      store.createCollection("bench");
      const { server, client } = await serve(store, "load.sock", 16 << 20);
      const cpu = process.cpuUsage();
      const start = performance.now();
      const latencies = await loadInFlight(
        (records) => client.put("bench", records),
        0,
        SOCKET_RECORDS,
        IN_FLIGHT,
      );
      const figures = loadFigures(SOCKET_RECORDS, start, latencies, cpu);
      await client.close();
      await server.close();
      await store.close();
      return figures;
    },
  },
  {
    name: `batched puts (${N.toLocaleString("en-US")} records, commits of 1000)`,
    async run() {
      big = await newStore("big");
      big.createCollection("bench");
      const cpu = process.cpuUsage();
      const start = performance.now();
      const latencies = load(big, main, 0, N);
      return loadFigures(N, start, latencies, cpu);
    },
  },
  {
    name: "single-record commits",
    async run() {
      await bigStore();
      const latencies: number[] = [];
      const count = n(500);
      const start = performance.now();
      for (let i = 0; i < count; i++) {
        const t = performance.now();
        big.put(main, [{ key: key((i * 104729) % N), value: record(i, "single") }]);
        latencies.push(performance.now() - t);
      }
      return {
        puts_per_s: Math.round(count / seconds(start)),
        commit_p50_ms: percentile(latencies, 50),
        commit_p99_ms: percentile(latencies, 99),
      };
    },
  },
  {
    name: "in-process gets (random keys)",
    async run() {
      await bigStore();
      const count = n(200_000);
      const start = performance.now();
      for (let i = 0; i < count; i++) big.get(main, key((i * 7919) % N));
      return { gets_per_s: Math.round(count / seconds(start)) };
    },
  },
  {
    name: "socket gets (one client)",
    async run() {
      await bigStore();
      const { server, client, socketPath } = await serve(big, "bench.sock", 1 << 20);
      const latencies: number[] = [];
      for (let i = 0; i < n(5000); i++) {
        const t = performance.now();
        await client.get("bench", key((i * 7919) % N));
        latencies.push((performance.now() - t) * 1000);
      }
      const inFlight = n(20_000);
      const start = performance.now();
      const pending = [];
      for (let i = 0; i < inFlight; i++) pending.push(client.get("bench", key((i * 31) % N)));
      await Promise.all(pending);
      const pipelined = Math.round(inFlight / seconds(start));
      // Single-record puts from 8 concurrent writers: group commit shares each fsync.
      const writers = await Promise.all(
        Array.from({ length: 3 }, () => StoreClient.connect(socketPath)),
      );
      writers.push(client);
      let commits = 0;
      const putStart = performance.now();
      await Promise.all(
        writers.flatMap((w) =>
          [0, 1].map(async (lane) => {
            for (let i = 0; i < n(250); i++) {
              await w.put("bench", [{ key: key((i * 7 + lane) % N), value: record(i, "socket") }]);
              commits++;
            }
          }),
        ),
      );
      const socketCommits = Math.round(commits / seconds(putStart));
      for (const w of writers.slice(0, 3)) await w.close();
      await client.close();
      await server.close();
      return {
        get_p50_us: Math.round(percentile(latencies, 50)),
        get_p99_us: Math.round(percentile(latencies, 99)),
        pipelined_gets_per_s: pipelined,
        socket_commits_per_s_8_writers: socketCommits,
      };
    },
  },
  {
    name: `branch creation at ${N.toLocaleString("en-US")} records`,
    async run() {
      await bigStore();
      const samples: number[] = [];
      for (let i = 0; i < n(50); i++) {
        const t = performance.now();
        big.createBranch("bench", `b${i}`);
        samples.push(performance.now() - t);
      }
      return { create_p50_ms: percentile(samples, 50), create_p99_ms: percentile(samples, 99) };
    },
  },
];

for (const size of SIZES) {
  cases.push({
    name: `changes.list on ${size.toLocaleString("en-US")} records`,
    async run() {
      let store = size === N ? await bigStore() : big;
      let where = main;
      if (size !== N) {
        store = await newStore(`n${size}`);
        store.createCollection("bench");
        load(store, main, 0, size);
      }
      const figures: Record<string, number> = {};
      for (const d of [1, 10, 100, 1000]) {
        // The median of several diffs (fresh branches, other keys each time): a single one
        // mostly measured the diff code's first runs (compiling), not the diff.
        const samples: number[] = [];
        for (let rep = 0; rep < (d === 1000 ? 3 : 7); rep++) {
          const branch = `d${d}-${rep}`;
          const base = store.createBranch("bench", branch, { branch: where.branch });
          const records = [];
          for (let i = 0; i < d; i++) {
            const at = (Math.floor((i * size) / d) + rep) % size;
            records.push({ key: key(at), value: record(i, `d${d}`) });
          }
          store.put({ collection: "bench", branch }, records);
          const t = performance.now();
          const { seen, loaded } = changesSince(store, "bench", branch, base.head.version);
          samples.push(performance.now() - t);
          if (seen !== d) throw new Error(`expected ${d} changes, saw ${seen}`);
          figures[`d${d}_nodes`] = loaded;
        }
        figures[`d${d}_ms`] = Number(percentile(samples, 50).toFixed(3));
      }
      where = main;
      if (store !== big) await store.close();
      return figures;
    },
  });
}

/** A store of CHURN_RECORDS records rewritten CHURN_ROUNDS times in commits of 1000, ready to release. */
async function churned(name: string): Promise<Store> {
  const dir = join(root, name);
  await createStore(dir, { shards: 4, cacheBytesTotal: 256 << 20, executorThreads: 2 });
  const store = openStore({
    dataDir: dir,
    branchCacheBytesPerShard: 64 << 20,
    maxPage: 1000,
    ...ENGINE_DEFAULTS,
    keptVersions: 4,
    retention: { releaseMaxRows: 1024, releaseBatch: 1_000_000, keep: { versions: 4, days: 0 } },
  });
  store.createCollection("bench");
  load(store, main, 0, CHURN_RECORDS);
  for (let round = 0; round < CHURN_ROUNDS; round++) {
    const records = [];
    for (let i = 0; i < 1000; i++)
      records.push({ key: key((round * 1000 + i) % CHURN_RECORDS), value: record(i, `r${round}`) });
    store.put(main, records);
  }
  return store;
}

cases.push({
  name: `retention release (${CHURN_RECORDS.toLocaleString("en-US")} records, ${CHURN_ROUNDS} rewrites of 1000)`,
  async run() {
    const store = await churned("retention");
    const before = store.stats();
    const t = performance.now();
    const result = store.release(Date.now() + 1000);
    const ms = performance.now() - t;
    const after = store.stats();
    await store.close();
    return {
      released_versions: result.released,
      nodes_freed: result.sweep?.nodes_freed ?? 0,
      node_mb_before: Number((before.node_bytes / 2 ** 20).toFixed(2)),
      node_mb_after: Number((after.node_bytes / 2 ** 20).toFixed(2)),
      release_ms: Number(ms.toFixed(1)),
    };
  },
});

cases.push({
  name: "same release, sweep in steps (as served)",
  async run() {
    const store = await churned("retention-steps");
    store.stepSweeps = true;
    // The longest pause of the event loop while the sweep runs: what a request may wait.
    const delay = monitorEventLoopDelay({ resolution: 1 });
    let ticks = 0;
    const counting = setInterval(() => ticks++, 0);
    const t = performance.now();
    delay.enable();
    const result = await store.releaseInSteps(Date.now() + 1000);
    delay.disable();
    const ms = performance.now() - t;
    clearInterval(counting);
    await store.close();
    return {
      released_versions: result.released,
      nodes_freed: result.sweep?.nodes_freed ?? 0,
      release_ms: Number(ms.toFixed(1)),
      loop_turns_during: ticks,
      max_pause_ms: Number((delay.max / 1e6).toFixed(2)),
    };
  },
});

/** `big` (N records on main), loaded here when the cases before were filtered out. */
async function bigStore(): Promise<Store> {
  if ((big as Store | undefined) === undefined) {
    big = await newStore("big");
    big.createCollection("bench");
    load(big, main, 0, N);
  }
  return big;
}

/**
 * Two branches of the big store from one head, `d` records changed on each (disjoint keys,
 * spread over the key space, so both sides move and the merge is three-way); `overlap`
 * changes the same keys on both sides instead (every one a conflict).
 */
function sides(store: Store, name: string, d: number, overlap: boolean) {
  store.createBranch("bench", `${name}-into`);
  store.createBranch("bench", `${name}-from`);
  const step = Math.floor(N / d);
  const edits = (offset: number, tag: string) =>
    Array.from({ length: d }, (_, i) => ({ key: key(i * step + offset), value: record(i, tag) }));
  store.put({ collection: "bench", branch: `${name}-from` }, edits(0, "theirs"));
  store.put({ collection: "bench", branch: `${name}-into` }, edits(overlap ? 0 : 1, "ours"));
}

cases.push({
  name: `branches.merge on ${N.toLocaleString("en-US")} records (d changes on each side)`,
  async run() {
    const store = await bigStore();
    const figures: Record<string, number> = {};
    for (const d of [10, 1000, 10_000].filter((d) => d <= N / 2)) {
      // The median of several merges (fresh branch pairs): the first pays for compiling.
      const dry: number[] = [];
      const merged: number[] = [];
      for (let rep = 0; rep < (d === 10 ? 7 : 2); rep++) {
        const name = `m${d}-${rep}`;
        sides(store, name, d, false);
        let t = performance.now();
        const preview = store.merge("bench", `${name}-from`, `${name}-into`, { dryRun: true });
        dry.push(performance.now() - t);
        t = performance.now();
        const result = store.merge("bench", `${name}-from`, `${name}-into`);
        merged.push(performance.now() - t);
        figures[`d${d}_nodes`] = result.nodes_loaded;
        if (result.applied !== d || preview.conflict_count !== 0) {
          throw new Error(`expected ${d} clean changes, got ${result.applied} and conflicts`);
        }
      }
      // The dry run is the merge's reading and merging; the merge adds its durable commit.
      figures[`d${d}_dry_run_ms`] = Number(percentile(dry, 50).toFixed(2));
      figures[`d${d}_merge_ms`] = Number(percentile(merged, 50).toFixed(2));
    }
    return figures;
  },
});

cases.push({
  name: `merge conflict preview on ${N.toLocaleString("en-US")} records (100 conflicts, dry run)`,
  async run() {
    const store = await bigStore();
    sides(store, "c100", 100, true);
    const samples: number[] = [];
    let result: ReturnType<Store["merge"]> | undefined;
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      result = store.merge("bench", "c100-from", "c100-into", { dryRun: true });
      samples.push(performance.now() - t);
    }
    if (result!.conflict_count !== 100) throw new Error(`${result!.conflict_count} conflicts`);
    return {
      conflicts: result!.conflict_count,
      nodes: result!.nodes_loaded,
      preview_p50_ms: Number(percentile(samples, 50).toFixed(2)),
    };
  },
});

// SKEIN_BENCH_ONLY=REGEX runs only the cases whose name matches (the big store is loaded
// on demand), e.g. SKEIN_BENCH_ONLY=merge for the merge figures alone.
const only = process.env.SKEIN_BENCH_ONLY;
await runBench(
  "store",
  { measures: MEASURES },
  only === undefined ? cases : cases.filter((c) => new RegExp(only, "i").test(c.name)),
);
await (big as Store | undefined)?.close();
