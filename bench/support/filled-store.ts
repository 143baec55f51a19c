/**
 * A store for the embedding and search benchmarks: a fresh one with a collection `notes`
 * on `main` of `records` records, keys `k000000` on, values from `value`, put in pages of
 * 1,000 (the walk's own page size is what the benches measure, not this).
 */

import {
  createStore,
  ENGINE_DEFAULTS,
  openStore,
  type Store,
} from "../../src/store/engine/index.ts";

export async function filledStore(
  dataDir: string,
  records: number,
  value: (i: number) => unknown,
  cacheBytes = 256 << 20,
): Promise<Store> {
  await createStore(dataDir, { shards: 4, cacheBytesTotal: cacheBytes, executorThreads: 1 });
  const store = openStore({
    dataDir,
    branchCacheBytesPerShard: cacheBytes / 4,
    maxPage: 1024,
    ...ENGINE_DEFAULTS,
  });
  store.createCollection("notes");
  for (let at = 0; at < records; at += 1000) {
    const page = Array.from({ length: Math.min(1000, records - at) }, (_, i) => ({
      key: `k${String(at + i).padStart(6, "0")}`,
      value: value(at + i),
    }));
    store.put({ collection: "notes", branch: "main" }, page);
  }
  return store;
}
