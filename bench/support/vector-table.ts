/**
 * What stored vectors cost the store, per record, apart from the model and the socket:
 * `node bench/support/vector-table.ts [CHECKOUT] [RECORDS]` writes RECORDS (20,000) records
 * of one 384-dimension vector to a companion collection in pages of 1,000 (the walk's
 * stored form, encoded by CHECKOUT's own `encodeVectors`, committed synchronously), then
 * reads the head into a vector table seven times (`readTable`: what exact search and an
 * HNSW build read) and seven diffs of 1,000 changed records (`readDiff` and `diffTable`:
 * a catch-up's share on the event loop), and prints the CPU per record of each (`process.cpuUsage`, all
 * threads: steadier than wall time on a shared machine) and the companion's encoded node
 * bytes per vector. CHECKOUT (default: this one) is a path to a Skein checkout, so the
 * same script measures another commit's worktree (issue 35: base64 JSON before, raw bytes
 * after; docs/search.md).
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(process.argv[2] ?? fileURLToPath(new URL("../..", import.meta.url)));
const RECORDS = Number(process.argv[3] ?? 20_000);
const DIMS = 384;
const ROUNDS = 7;
const C = "notes~embed";

const { filledStore } = await import(`${root}/bench/support/filled-store.ts`);
const { encodeVectors } = await import(`${root}/src/store/embed/companions.ts`);
const { diffTable, readTable } = await import(`${root}/src/store/search/table-reader.ts`);
const { readDiff } = await import(`${root}/src/store/search/diff.ts`);
const { walk } = await import(`${root}/src/store/tree/cursor.ts`);

const parent = mkdtempSync(join(tmpdir(), "skein-vector-table-"));
// The benches' store (its `notes` left empty); the vectors go to the companion.
const store = await filledStore(join(parent, "data"), 0, () => null);
store.createCollection(C);
let seed = 1;
const random = () => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed / 2 ** 32 - 0.5;
};

/** Commits one vector for each of `keys` (the stored form of CHECKOUT); its CPU in µs. */
function commitVectors(keys: readonly string[]): number {
  const vectors = keys.map(() => Float32Array.from({ length: DIMS }, random));
  const start = process.cpuUsage();
  const puts: { key: string; value: unknown }[] = [];
  const bytes: [string, Uint8Array][] = [];
  vectors.forEach((vector, i) => {
    const stored = encodeVectors([vector]);
    // Raw bytes from this version on; a JSON value from the versions before.
    if (stored instanceof Uint8Array) bytes.push([keys[i]!, stored]);
    else puts.push({ key: keys[i]!, value: stored });
  });
  store.edit({ collection: C, branch: "main" }, { puts, bytes, deletes: [] });
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

const keyOf = (i: number) => `k${String(i).padStart(6, "0")}`;
let commitCpu = 0;
for (let at = 0; at < RECORDS; at += 1000) {
  const count = Math.min(RECORDS, at + 1000) - at;
  commitCpu += commitVectors(Array.from({ length: count }, (_, i) => keyOf(at + i)));
}

const { version } = store.resolve(C, "main", undefined);
let nodeBytes = 0;
version.roots.forEach((rootNode: string | null, shard: number) => {
  walk(store.ctx.readers[shard], rootNode, (node: { size: number }) => {
    nodeBytes += node.size;
  });
});
const where = { collection: C, branch: "main", version: version.version };
const reads: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const start = process.cpuUsage();
  const table = await readTable(store, where, undefined, RECORDS);
  const used = process.cpuUsage(start);
  if (table.keys.length !== RECORDS) throw new Error(`read ${table.keys.length} records`);
  reads.push((used.user + used.system) / RECORDS);
}
reads.sort((a, b) => a - b);

// A catch-up's share on the event loop: the diff of 1,000 changed records spread over the
// keys, read into the table of records set (what an index's catch-up applies).
const catchUps: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const from = store.history(C, "main", undefined, 1).rows[0].version;
  commitVectors(Array.from({ length: 1000 }, (_, i) => keyOf((i * 97 + round) % RECORDS)));
  const to = store.history(C, "main", undefined, 1).rows[0].version;
  const start = process.cpuUsage();
  const diff = readDiff(store, { collection: C, branch: "main" }, from, to, 200_000);
  const { set } = diffTable(diff, to);
  const used = process.cpuUsage(start);
  if (set.keys.length !== 1000) throw new Error(`${set.keys.length} records in the diff`);
  catchUps.push((used.user + used.system) / 1000);
}
catchUps.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    checkout: root,
    records: RECORDS,
    node_bytes_per_vector: Math.round(nodeBytes / RECORDS),
    commit_cpu_us_per_record: Number((commitCpu / RECORDS).toFixed(2)),
    table_read_cpu_us_per_record_p50: Number(reads[ROUNDS >> 1]!.toFixed(2)),
    table_read_cpu_us_per_record: reads.map((r) => Number(r.toFixed(2))),
    catch_up_read_cpu_us_per_record_p50: Number(catchUps[ROUNDS >> 1]!.toFixed(2)),
  }),
);
await store.close();
rmSync(parent, { recursive: true, force: true });
