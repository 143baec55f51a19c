/**
 * The cold case of `npm run bench:search` (issue #35's user case): a freshly embedded
 * collection searched from the moment its walk ends. Records of about 60 words are
 * embedded by the shipped worker (bin/skein-embed-worker) with a 384-dimension model made
 * by test/store/embed/test-model.ts (nothing is downloaded); as soon as the walk has no
 * record pending, `CONNECTIONS` socket clients each keep `IN_FLIGHT` vector searches in
 * flight, each question embedded by the real question worker. Figures: queries/s for each
 * second, p50/p99 before and after the index took over, and the second it did (the moment
 * the store's stats count every record in the HNSW index). Beside the searches, a reader on
 * a fifth connection gets one record every 5 ms: its latency until the index took over
 * (the build and the exact scans running) shows whether that work holds the event loop.
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { StoreClient } from "../../src/store/client/client.ts";
import { enableField, fieldStatus } from "../../src/store/embed/verbs.ts";
import { writeTestModel } from "../../test/store/embed/test-model.ts";
import { type Figures, percentile } from "../harness.ts";
import { benchEmbedSettings } from "./embed-settings.ts";
import { filledStore } from "./filled-store.ts";
import { serveSearch } from "./search-server.ts";

const WORKER = fileURLToPath(new URL("../../bin/skein-embed-worker", import.meta.url));
const CONNECTIONS = 4;
const IN_FLIGHT = 8;
/** The pause between two gets of the reader beside the searches. */
const GET_EVERY_MS = 5;
const DIMS = 384;

// Words of the generated model's vocabulary, so a text is words, not letter pieces.
const WORDS =
  "the of and to in is it that on for with as was by at be this are from or have not but what all were when we there can more one about which their will up out time if so into some them other than then its only also two these first new any".split(
    " ",
  );
/** A deterministic text of `count` words: record `i`'s (or question `i`'s) own mix. */
function words(i: number, count: number): string {
  let x = (i + 1) * 2654435761;
  return Array.from({ length: count }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return WORDS[x % WORDS.length];
  }).join(" ");
}

/**
 * `exactOnly`: no HNSW index is built (the index minimum above the record count), so every
 * search is the exact scan: what the cold case gives before the index takes over, alone.
 */
export async function coldSearch(
  root: string,
  records: number,
  seconds: number,
  exactOnly = false,
): Promise<Figures> {
  const model = await writeTestModel(join(root, "cold-model"), { dims: DIMS, maxTokens: 128 });
  const dataDir = join(root, exactOnly ? "cold-exact-store" : "cold-store");
  const store = await filledStore(dataDir, records, (i) => ({ body: words(i, 60) }));
  const settings = benchEmbedSettings(WORKER, model.dir, model.identity, { embed_waiting: 1024n });
  const { embed, search, clients, close } = await serveSearch(
    store,
    dataDir,
    settings,
    CONNECTIONS + 1,
    exactOnly ? records + 1 : undefined,
  );

  const walkStart = performance.now();
  enableField(store, embed, "notes", "body");
  embed.startWalk(store);
  search.start();
  while (fieldStatus(store, embed, "notes").pending > 0) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const walkS = (performance.now() - walkStart) / 1000;

  // The load starts the moment the walk ends; the index's build starts with it.
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let tookOver: number | undefined;
  const watch = setInterval(() => {
    if (tookOver === undefined && search.stats().vector_records >= records) {
      tookOver = performance.now() - t0;
    }
  }, 20);
  const done: { at: number; ms: number }[] = [];
  let next = 0;
  const lane = async (c: StoreClient) => {
    while (performance.now() < end) {
      const start = performance.now();
      await c.search("notes", "body", words(1_000_000 + next++, 6), {
        mode: "vector",
        k: 10,
        values: false,
      });
      const now = performance.now();
      done.push({ at: now - t0, ms: now - start });
    }
  };
  // A reader of its own, on its own connection: a document.get every GET_EVERY_MS.
  const gets: { at: number; ms: number }[] = [];
  const getter = async (c: StoreClient) => {
    while (performance.now() < end) {
      const start = performance.now();
      await c.get("notes", "k000042");
      const now = performance.now();
      gets.push({ at: now - t0, ms: now - start });
      await new Promise((r) => setTimeout(r, GET_EVERY_MS));
    }
  };
  const searchers = clients.slice(0, CONNECTIONS);
  await Promise.all([
    ...searchers.flatMap((c) => Array.from({ length: IN_FLIGHT }, () => lane(c))),
    getter(clients[CONNECTIONS]!),
  ]);
  clearInterval(watch);

  await close();
  await store.close();

  const perSecond = Array.from({ length: Math.ceil(seconds) }, () => 0);
  for (const d of done) {
    const s = Math.floor(d.at / 1000);
    if (s < perSecond.length) perSecond[s]!++;
  }
  const before = done.filter((d) => tookOver === undefined || d.at < tookOver).map((d) => d.ms);
  const after = done.filter((d) => tookOver !== undefined && d.at >= tookOver).map((d) => d.ms);
  const all = done.map((d) => d.ms);
  const getsBefore = gets.filter((d) => tookOver === undefined || d.at < tookOver).map((d) => d.ms);
  const p50 = (samples: number[]) =>
    samples.length === 0 ? "none" : Number(percentile(samples, 50).toFixed(1));
  const p99 = (samples: number[]) =>
    samples.length === 0 ? "none" : Number(percentile(samples, 99).toFixed(1));
  const rate = (n: number, ms: number) => (ms <= 0 ? "none" : Math.round(n / (ms / 1000)));
  const loadMs = Math.min(performance.now() - t0, seconds * 1000);
  return {
    walk_s: Number(walkS.toFixed(1)),
    walk_records_per_s: Math.round(records / walkS),
    index_took_over_s: tookOver === undefined ? "never" : Number((tookOver / 1000).toFixed(1)),
    qps_each_second: perSecond.join(" "),
    qps_before_index: rate(before.length, tookOver ?? loadMs),
    qps_after_index: tookOver === undefined ? "none" : rate(after.length, loadMs - tookOver),
    p50_ms: p50(all),
    p99_ms: p99(all),
    exact_p50_ms: p50(before),
    index_p50_ms: p50(after),
    index_p99_ms: p99(after),
    get_before_index_p50_ms: p50(getsBefore),
    get_before_index_p99_ms: p99(getsBefore),
    get_before_index_max_ms:
      getsBefore.length === 0 ? "none" : Number(Math.max(...getsBefore).toFixed(1)),
  };
}
