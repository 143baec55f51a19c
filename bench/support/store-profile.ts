/**
 * A CPU profile of the store engine's hot paths, without the benchmark's other cases:
 * `node --cpu-prof --cpu-prof-dir DIR bench/support/store-profile.ts [puts|gets|diff]…`
 * loads SKEIN_BENCH_RECORDS records (default 200,000) with pipelined commits, then runs
 * random gets and 10-change diffs in loops long enough for the profile to show where the
 * time goes. It prints the rate of each phase; `bench:store` stays the source of figures.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createStore, ENGINE_DEFAULTS, openStore } from "../../src/store/engine/index.ts";
import { changesSince, key, record } from "./store-shape.ts";

const N = Number(process.env.SKEIN_BENCH_RECORDS ?? 200_000);
const phases = new Set(
  process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["puts", "gets", "diff"],
);
/** CPU µs (user + system, this process) per operation since `since`: steadier than wall time. */
function cpuPer(since: NodeJS.CpuUsage, operations: number): string {
  const used = process.cpuUsage(since);
  return `${((used.user + used.system) / operations).toFixed(2)} µs CPU`;
}

const root = mkdtempSync(join(tmpdir(), "skein-profile-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));
await createStore(root, { shards: 4, cacheBytesTotal: 512 << 20, executorThreads: 2 });
const store = openStore({
  dataDir: root,
  branchCacheBytesPerShard: 128 << 20,
  maxPage: 1000,
  ...ENGINE_DEFAULTS,
});
store.createCollection("bench");
const main = { collection: "bench", branch: "main" };

let t = performance.now();
let cpu = process.cpuUsage();
const inFlight: Promise<unknown>[] = [];
for (let start = 0; start < N; start += 1000) {
  const records = [];
  for (let i = start; i < Math.min(N, start + 1000); i++)
    records.push({ key: key(i), value: record(i) });
  inFlight.push(store.putPipelined(main, records));
  if (inFlight.length >= 4) await inFlight.shift();
}
await Promise.all(inFlight);
await store.idle();
console.log(
  `puts: ${Math.round(N / ((performance.now() - t) / 1000))}/s ${cpuPer(cpu, N / 1000)}/commit`,
);

if (phases.has("gets")) {
  const count = 1_000_000;
  const keys = Array.from({ length: 4096 }, (_, i) => key((i * 7919) % N));
  t = performance.now();
  cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) store.get(main, keys[i & 4095]!);
  console.log(
    `gets: ${Math.round(count / ((performance.now() - t) / 1000))}/s ${cpuPer(cpu, count)}`,
  );
}

if (phases.has("diff")) {
  const samples: number[] = [];
  let cpuUs = 0;
  for (let round = 0; round < 300; round++) {
    const branch = `d${round}`;
    const base = store.createBranch("bench", branch);
    const records = [];
    for (let i = 0; i < 10; i++)
      records.push({ key: key(Math.floor((i * N) / 10) + round), value: record(i, branch) });
    store.put({ collection: "bench", branch }, records);
    t = performance.now();
    cpu = process.cpuUsage();
    const { seen } = changesSince(store, "bench", branch, base.head.version);
    samples.push(performance.now() - t);
    const used = process.cpuUsage(cpu);
    cpuUs += used.user + used.system;
    if (seen !== 10) throw new Error(`${seen} changes`);
  }
  samples.sort((a, b) => a - b);
  console.log(
    `diff d=10: p50 ${samples[150]!.toFixed(3)} ms, ${(cpuUs / 300).toFixed(0)} µs CPU mean`,
  );
}
await store.close();
