/**
 * `npm run bench:namespaces`: the workflow server foundation end to end. A real server
 * (in this process, real socket, real SQLite file with synchronous commits) answers
 * authenticated namespace calls: creations (each a durable commit before the answer),
 * idempotent repeats, and grant-filtered listings over 1,500 namespaces; plus the create
 * path of each storage backend alone (SQLite; PostgreSQL when one is reachable), to show
 * what the HTTP layer adds.
 */

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../src/common/log.ts";
import { PostgresWorkflowStore } from "../src/workflow/persistence/postgres/store.ts";
import { SqliteWorkflowStore } from "../src/workflow/persistence/sqlite/store.ts";
import type { WorkflowStore } from "../src/workflow/persistence/store.ts";
import { startServer } from "../src/workflow/server.ts";
import { type Figures, knob, percentile, runBench, skipped } from "./harness.ts";
import { postgresMissing } from "./support/needs.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = [
  "src/workflow/http",
  "src/workflow/auth",
  "src/workflow/namespaces",
  "src/workflow/persistence",
  "src/workflow/server.ts",
];

/** Requests per case, as a share of the normal counts (smoke: a few of each). */
const SCALE = knob("BENCH_SCALE", 1, 0.02);
const n = (count: number) => Math.max(2, Math.round(count * SCALE));

const dir = await mkdtemp(join(tmpdir(), "skein-bench-"));
const server = await startServer(join(dir, "skein.toml"), {
  logger: silentLogger(),
  listen: { host: "127.0.0.1", port: 0 },
});
const token = (await readFile(join(server.config.dataDir, "admin.token"), "utf8")).trim();
const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };

/** Sends `count` requests with `concurrency` in flight; reports rate and latency. */
async function load(
  count: number,
  concurrency: number,
  send: (i: number) => Promise<Response>,
): Promise<Figures> {
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t = performance.now();
        const response = await send(i);
        await response.arrayBuffer();
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  return {
    requests: count,
    concurrency,
    req_per_s: Math.round(count / seconds),
    p50_ms: percentile(latencies, 50),
    p99_ms: percentile(latencies, 99),
  };
}

const PG_URL = process.env.SKEIN_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

async function dropSchema(schema: string): Promise<void> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: PG_URL });
  try {
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end().catch(() => {});
  }
}

/** n(1,000) namespace creations straight on a store, one at a time. */
async function storeCreates(store: WorkflowStore): Promise<Figures> {
  const times: number[] = [];
  const count = n(1000);
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await store.namespaces.create({ name: `n-${i}`, createdBy: "bench", createdAt: 0 });
    times.push(performance.now() - t);
  }
  const seconds = (performance.now() - start) / 1000;
  await store.close();
  return {
    requests: count,
    req_per_s: Math.round(count / seconds),
    p50_ms: percentile(times, 50),
    p99_ms: percentile(times, 99),
  };
}

const create = (name: string) =>
  fetch(`${server.url}/namespaces`, { method: "POST", headers, body: JSON.stringify({ name }) });

try {
  await runBench("namespaces", { measures: MEASURES }, [
    {
      name: "POST /namespaces, new name (durable commit), 1 in flight",
      run: () => load(n(500), 1, (i) => create(`seq-${i}`)),
    },
    {
      name: "POST /namespaces, new name (durable commit), 8 in flight",
      run: () => load(n(1000), 8, (i) => create(`par-${i}`)),
    },
    {
      name: "POST /namespaces, existing name (created: false), 8 in flight",
      run: () => load(n(2000), 8, (i) => create(`par-${i % 100}`)),
    },
    {
      name: `GET /namespaces/records, ${n(500) + n(1000)} namespaces, all granted`,
      run: () => load(n(200), 4, () => fetch(`${server.url}/namespaces/records`, { headers })),
    },
    {
      name: "GET /health (no auth, no storage), 8 in flight",
      run: () => load(n(3000), 8, () => fetch(`${server.url}/health`)),
    },
    {
      name: "SQLite store create alone (synchronous commit)",
      run: () => storeCreates(SqliteWorkflowStore.open(join(dir, "alone.db"))),
    },
    {
      name: "PostgreSQL store create alone (local, synchronous commit)",
      run: async () => {
        const missing = await postgresMissing(PG_URL);
        if (missing !== undefined) return skipped(missing);
        const schema = `skein_bench_${process.pid}`;
        try {
          return await storeCreates(await PostgresWorkflowStore.open(PG_URL, schema));
        } finally {
          await dropSchema(schema);
        }
      },
    },
  ]);
} finally {
  await server.close();
  await rm(dir, { recursive: true, force: true });
}
