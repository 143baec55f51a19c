/**
 * `npm run bench:query`: records scanned per second by `query.run` over the socket with
 * the shipped QuickJS worker, for a simple filter (1 record in 100 kept) and a projection
 * (every record, two fields), each twice: as one-line expressions (which the worker's fast
 * path evaluates outside QuickJS) and as block bodies of the same meaning (outside the
 * fast path's grammar: QuickJS runs them), beside `document.list` of the same records in the same run
 * (the ceiling: the same reads and socket, no sandbox) and JSONata evaluated in-process
 * on the listed records (what a user might run instead). Records have the store bench's
 * shape (about 200 bytes). Every case pages through the whole collection with pages of
 * max_page (1000) rows. SKEIN_BENCH_RECORDS sets the record count (default 1,000,000).
 *
 * Besides records per second (wall time, which other load on the machine moves), each
 * case reports the CPU time per record of this process (the store and the bench's client)
 * and of the query workers (from /proc, on Linux): those move far less with load, and say
 * which side bounds the rate.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import jsonata from "jsonata";
import { StoreClient } from "../src/store/client/client.ts";
import { createStore, ENGINE_DEFAULTS, openStore } from "../src/store/engine/index.ts";
import { QueryService } from "../src/store/query/service.ts";
import { startStoreServer } from "../src/store/transport/server.ts";
import { type BenchCase, knob, runBench } from "./harness.ts";
import { processCpuSeconds } from "./support/process-cpu.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = ["src/store/query", "bin/skein-query-worker"];

const N = knob("SKEIN_BENCH_RECORDS", 1_000_000, 3_000);
const PAGE = 1000;
const WORKER = fileURLToPath(new URL("../bin/skein-query-worker", import.meta.url));

const key = (i: number) => `doc-${String(i).padStart(7, "0")}`;
const record = (i: number) => ({
  id: i,
  tag: "v",
  title: `Record number ${i}`,
  body: "lorem ipsum dolor sit amet ".repeat(5),
  tags: ["alpha", "beta", "gamma"],
});

const root = mkdtempSync(join(tmpdir(), "skein-bench-query-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

const dir = join(root, "store");
await createStore(dir, { shards: 4, cacheBytesTotal: 512 << 20, executorThreads: 2 });
const store = openStore({
  dataDir: dir,
  branchCacheBytesPerShard: 128 << 20,
  maxPage: PAGE,
  ...ENGINE_DEFAULTS,
});
store.createCollection("bench");
for (let start = 0; start < N; start += PAGE) {
  const batch = [];
  for (let i = start; i < Math.min(N, start + PAGE); i++)
    batch.push({ key: key(i), value: record(i) });
  store.put({ collection: "bench", branch: "main" }, batch);
}
const queries = await QueryService.start({
  query_worker: WORKER,
  query_time_ms: 600_000n,
  query_memory_bytes: 64n << 20n,
  query_outputs_per_record: 1n,
  query_scan_records: BigInt(N + 1),
  query_max_running: 1n,
});
if (queries.failure !== null) throw queries.failure;
const socketPath = join(root, "s.sock");
const server = await startStoreServer(store, {
  socketPath,
  maxFrame: 64 << 20,
  maxClients: 4,
  timeoutMs: 600_000,
  queries,
});
const client = await StoreClient.connect(socketPath, { maxFrame: 64 << 20, timeoutMs: 600_000 });

type Page = { rows: unknown[]; next: string | null; scanned?: number };

/** CPU seconds (user + system) the query workers have used, or NaN off Linux. */
function workersCpuSeconds(): number {
  let seconds = 0;
  try {
    for (const pid of queries.workerPids) seconds += processCpuSeconds(pid);
  } catch {
    return Number.NaN;
  }
  return seconds;
}

/** Pages through the collection with `call`; records per second and rows seen. */
async function pages(call: (after: string | undefined) => Promise<Page>) {
  const cpu = process.cpuUsage();
  const workerCpu = workersCpuSeconds();
  const start = performance.now();
  let after: string | undefined;
  let rows = 0;
  let scanned = 0;
  let calls = 0;
  do {
    const page = await call(after);
    rows += page.rows.length;
    scanned += page.scanned ?? page.rows.length;
    calls++;
    after = page.next ?? undefined;
  } while (after !== undefined);
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return {
    records_per_s: Math.round(scanned / seconds),
    rows,
    calls,
    seconds: +seconds.toFixed(2),
    store_cpu_us_per_record: +((used.user + used.system) / scanned).toFixed(2),
    worker_cpu_us_per_record: +(((workersCpuSeconds() - workerCpu) * 1e6) / scanned).toFixed(2),
  };
}

const list = (after: string | undefined) =>
  client.call("document.list", {
    collection: "bench",
    limit: PAGE,
    ...(after ? { after } : {}),
  }) as Promise<Page>;
const query = (code: string) => (after: string | undefined) =>
  client.query("bench", code, { limit: PAGE, ...(after ? { after } : {}) }) as Promise<Page>;

let ceiling = 0;
const cases: BenchCase[] = [
  {
    name: `document.list, ${N} records (ceiling)`,
    async run() {
      const figures = await pages(list);
      ceiling = figures.records_per_s;
      return figures;
    },
  },
  {
    name: "query.run filter, fast path: (r) => r.value.id % 100 === 0 ? r.value : undefined",
    async run() {
      const figures = await pages(query("(r) => r.value.id % 100 === 0 ? r.value : undefined"));
      return { ...figures, of_list: +(figures.records_per_s / ceiling).toFixed(2) };
    },
  },
  {
    name: "query.run projection, fast path: (r) => ({id: r.value.id, title: r.value.title})",
    async run() {
      const figures = await pages(query("(r) => ({ id: r.value.id, title: r.value.title })"));
      return { ...figures, of_list: +(figures.records_per_s / ceiling).toFixed(2) };
    },
  },
  {
    name: "query.run filter, QuickJS: (r) => { return r.value.id % 100 === 0 ? r.value : undefined }",
    async run() {
      const code = "(r) => { return r.value.id % 100 === 0 ? r.value : undefined }";
      const figures = await pages(query(code));
      return { ...figures, of_list: +(figures.records_per_s / ceiling).toFixed(2) };
    },
  },
  {
    name: "query.run projection, QuickJS: (r) => { return {id: r.value.id, title: r.value.title} }",
    async run() {
      const code = "(r) => { return { id: r.value.id, title: r.value.title } }";
      const figures = await pages(query(code));
      return { ...figures, of_list: +(figures.records_per_s / ceiling).toFixed(2) };
    },
  },
  {
    name: "JSONata in-process filter on listed records (list + evaluate)",
    async run() {
      const expression = jsonata("value.id % 100 = 0 ? value");
      return pages(async (after) => {
        const page = await list(after);
        const kept: unknown[] = [];
        for (const row of page.rows) {
          const out = await expression.evaluate(row);
          if (out !== undefined) kept.push(out);
        }
        return { rows: page.rows, next: page.next, scanned: page.rows.length };
      });
    },
  },
];

await runBench("query", { measures: MEASURES }, cases);
await client.close();
await server.close();
queries.close();
await store.close();
