/**
 * `npm run bench:search`: search.text over 100,000 records with synthetic clustered
 * 384-dimension vectors (1,000 clusters) and texts, through the socket.
 *
 * The store, its socket server, the embedding service, the walk and the search service run
 * in this process as in `serve`. The embedding worker is bench/support/clustered-worker (a
 * real process speaking the worker protocol), which answers each text with the clustered
 * vector it names, so documents are embedded by the real walk and questions by the real
 * question worker, from one distribution. Figures:
 *
 * - the walk of 100,000 records and the companion's encoded node bytes per vector; the HNSW
 *   index build (background, from the first search); the keyword index build (the first
 *   keyword search);
 * - vector queries/s (k 10) and recall@10 against exact search (`exact: true`, also through
 *   the socket), keyword and hybrid queries/s, with `CONNECTIONS` clients each keeping
 *   `IN_FLIGHT` calls in flight;
 * - an update of 1,000 changed records: the walk's time to embed them, the HNSW catch-up
 *   from the diff (the index's own figure), and the keyword catch-up (the first keyword
 *   search after it);
 * - the cold case (support/cold-search.ts): a collection embedded by the shipped worker
 *   with a generated 384-dimension model, searched from 32 in flight from the moment its
 *   walk ends, questions embedded by the question worker: queries/s for each second, p50/p99,
 *   and the second the index took over; then the same with no index at all (every search
 *   the exact scan), for up to 15 s.
 *
 * Nothing is asserted; the machine is shared, so note its load.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { StoreClient } from "../src/store/client/client.ts";
import { enableField, fieldStatus } from "../src/store/embed/verbs.ts";
import { INDEX_MIN_RECORDS } from "../src/store/search/service.ts";
import { walk } from "../src/store/tree/cursor.ts";
import { type Figures, knob, runBench } from "./harness.ts";
import { CLUSTERS, topicWords } from "./support/clustered-vectors.ts";
import { coldSearch } from "./support/cold-search.ts";
import { benchEmbedSettings } from "./support/embed-settings.ts";
import { filledStore } from "./support/filled-store.ts";
import { serveSearch } from "./support/search-server.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = ["src/store/search", "src/store/embed"];

const RECORDS = knob("SKEIN_BENCH_SEARCH_RECORDS", 100_000, 2_000);
// Below the index's minimum the service searches exactly and the build below never ends.
if (RECORDS < INDEX_MIN_RECORDS) {
  throw new Error(
    `SKEIN_BENCH_SEARCH_RECORDS must be at least ${INDEX_MIN_RECORDS} (the HNSW minimum)`,
  );
}
const RECALL_QUESTIONS = knob("BENCH_RECALL_QUESTIONS", 100, 10);
const QPS_SECONDS = knob("BENCH_QPS_SECONDS", 5, 0.3);
const EXACT_QUESTIONS = knob("BENCH_EXACT_QUESTIONS", 20, 3);
const CONNECTIONS = 4;
const IN_FLIGHT = 4;
const UPDATE = knob("BENCH_UPDATE", 1000, 100);
/** The cold case: records of about 60 words, and the seconds of load from the walk's end. */
const COLD_RECORDS = knob("SKEIN_BENCH_COLD_RECORDS", 20_000, INDEX_MIN_RECORDS + 100);
const COLD_SECONDS = knob("BENCH_COLD_SECONDS", 60, 3);
const WORKER = fileURLToPath(new URL("./support/clustered-worker", import.meta.url));

const root = mkdtempSync(join(tmpdir(), "skein-bench-search-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

const body = (i: number, round = 0) =>
  `c${i % CLUSTERS} s${i + round * RECORDS} ${topicWords(i % CLUSTERS, i + round)}`;
const question = (i: number) => `c${(i * 7919) % CLUSTERS} q${i}`;
const keywordQuestion = (i: number) =>
  topicWords((i * 7919) % CLUSTERS, i)
    .split(" ")
    .slice(0, 3)
    .join(" ");

const settings = benchEmbedSettings(WORKER, root, "c".repeat(64), {
  embed_batch_items: 256n,
  embed_frame_bytes: 64 << 20,
  embed_waiting: 1024n,
});

const dataDir = join(root, "store");
const store = await filledStore(dataDir, RECORDS, (i) => ({ body: body(i) }));
const { embed, search, clients, close } = await serveSearch(store, dataDir, settings, CONNECTIONS);
const client = clients[0]!;

async function walked(): Promise<number> {
  const start = performance.now();
  await new Promise((r) => setTimeout(r, 50));
  while (fieldStatus(store, embed, "notes").pending > 0) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return (performance.now() - start) / 1000;
}

/** Encoded bytes of every node of the companion's head (leaves and internal), per record. */
function companionBytesPerVector(): number {
  const { version } = store.resolve("notes~embed", "main", undefined);
  let bytes = 0;
  version.roots.forEach((root, shard) => {
    walk(store.ctx.readers[shard]!, root, (node) => {
      bytes += node.size;
    });
  });
  return Math.round(bytes / RECORDS);
}

async function statsOf(): Promise<{ vector_records: number }> {
  return ((await client.call("store.stats", {})) as { search: { vector_records: number } }).search;
}

/** Calls per second with CONNECTIONS clients each keeping IN_FLIGHT calls going. */
async function rate(call: (c: StoreClient, i: number) => Promise<unknown>): Promise<number> {
  let done = 0;
  let next = 0;
  const end = performance.now() + QPS_SECONDS * 1000;
  const start = performance.now();
  const lane = async (c: StoreClient) => {
    while (performance.now() < end) {
      await call(c, next++);
      done++;
    }
  };
  await Promise.all(clients.flatMap((c) => Array.from({ length: IN_FLIGHT }, () => lane(c))));
  return Math.round(done / ((performance.now() - start) / 1000));
}

const figures = {
  build: {} as Figures,
  queries: {} as Figures,
  update: {} as Figures,
};
/** Prints a figure as soon as it is measured (a long run on a loaded machine shows progress). */
function note(group: keyof typeof figures, name: string, value: number | string): void {
  figures[group][name] = value;
  process.stderr.write(`  ${group}.${name} = ${value} (load ${loadavg()[0]!.toFixed(1)})\n`);
}

// The walk, then the index builds.
enableField(store, embed, "notes", "body");
embed.startWalk(store);
search.start();
note("build", "walk_s", Number((await walked()).toFixed(1)));
note("build", "companion_bytes_per_vector", companionBytesPerVector());
let t = performance.now();
await client.search("notes", "body", question(0), { mode: "vector", values: false });
while ((await statsOf()).vector_records < RECORDS) await new Promise((r) => setTimeout(r, 50));
note("build", "hnsw_build_s", Number(((performance.now() - t) / 1000).toFixed(2)));
t = performance.now();
await client.search("notes", "body", keywordQuestion(0), { mode: "keyword", values: false });
note("build", "keyword_build_s", Number(((performance.now() - t) / 1000).toFixed(2)));

// Recall@10 against exact search, both through the socket.
let found = 0;
for (let i = 0; i < RECALL_QUESTIONS; i++) {
  const q = question(i);
  const [indexed, exact] = await Promise.all([
    client.search("notes", "body", q, { mode: "vector", k: 10, values: false }),
    client.search("notes", "body", q, { mode: "vector", k: 10, values: false, exact: true }),
  ]);
  const truth = new Set(exact.rows.map((r) => r.key));
  found += indexed.rows.filter((r) => truth.has(r.key)).length;
}
note("queries", "recall_at_10", Number((found / (RECALL_QUESTIONS * 10)).toFixed(4)));
t = performance.now();
for (let i = 0; i < EXACT_QUESTIONS; i++) {
  await client.search("notes", "body", question(i), { mode: "vector", values: false, exact: true });
}
note("queries", "exact_ms", Number(((performance.now() - t) / EXACT_QUESTIONS).toFixed(1)));
note(
  "queries",
  "vector_qps",
  await rate((c, i) =>
    c.search("notes", "body", question(i), { mode: "vector", k: 10, values: false }),
  ),
);
note(
  "queries",
  "keyword_qps",
  await rate((c, i) =>
    c.search("notes", "body", keywordQuestion(i), { mode: "keyword", k: 10, values: false }),
  ),
);
note(
  "queries",
  "hybrid_qps",
  await rate((c, i) =>
    c.search("notes", "body", `${question(i)} ${keywordQuestion(i)}`, { k: 10, values: false }),
  ),
);

// An update of 1,000 changed records.
const changed = Array.from({ length: UPDATE }, (_, i) => {
  const n = (i * 97) % RECORDS;
  return { key: `k${String(n).padStart(6, "0")}`, value: { body: body(n, 1) } };
});
await client.put("notes", changed);
note("update", "walk_s", Number((await walked()).toFixed(2)));
t = performance.now();
await client.search("notes", "body", question(1), { mode: "vector", values: false });
note("update", "first_vector_search_ms", Math.round(performance.now() - t));
const last = search.lastIndexUpdate;
note("update", "hnsw_catch_up_records", last?.records ?? 0);
note("update", "hnsw_catch_up_ms", last === undefined ? "none" : Math.round(last.ms));
t = performance.now();
await client.search("notes", "body", keywordQuestion(1), { mode: "keyword", values: false });
note("update", "keyword_catch_up_ms", Math.round(performance.now() - t));

const load = loadavg()
  .map((l) => l.toFixed(2))
  .join(" ");
await close();
await store.close();
await runBench("search", { measures: MEASURES }, [
  { name: `build (${RECORDS} records, load ${load})`, run: () => figures.build },
  { name: "queries", run: () => figures.queries },
  { name: `update of ${UPDATE} records`, run: () => figures.update },
  {
    name: `cold: ${COLD_RECORDS} records × 384 dims, 32 in flight from the walk's end`,
    run: () => coldSearch(root, COLD_RECORDS, COLD_SECONDS),
  },
  {
    name: `cold, exact search alone (no index): ${COLD_RECORDS} records × 384 dims, 32 in flight`,
    run: () => coldSearch(root, COLD_RECORDS, Math.min(COLD_SECONDS, 15), true),
  },
]);
