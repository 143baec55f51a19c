import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import {
  createStore,
  ENGINE_DEFAULTS,
  openStore,
  type Store,
  type StoreEngineOptions,
} from "../../../src/store/engine/index.ts";

export function engineOptions(
  dataDir: string,
  overrides: Partial<StoreEngineOptions> = {},
): StoreEngineOptions {
  return {
    dataDir,
    branchCacheBytesPerShard: 4 << 20,
    maxPage: 500,
    ...ENGINE_DEFAULTS,
    ...overrides,
  };
}

/** A fresh store in a temp dir (created like `serve --create`), closed and removed after. */
export async function freshStore(
  overrides: Partial<StoreEngineOptions> = {},
  shards = 4,
): Promise<{
  store: Store;
  dir: string;
  reopen: (o?: Partial<StoreEngineOptions>) => Promise<Store>;
}> {
  const parent = mkdtempSync(join(tmpdir(), "skein-store-"));
  const dir = join(parent, "data");
  await createStore(dir, { shards, cacheBytesTotal: 64 << 20, executorThreads: 1 });
  let store = openStore(engineOptions(dir, overrides));
  after(async () => {
    await store.close();
    rmSync(parent, { recursive: true, force: true });
  });
  return {
    store,
    dir,
    async reopen(o = overrides) {
      await store.close();
      store = openStore(engineOptions(dir, o));
      return store;
    },
  };
}

/** A deterministic pseudo-random sequence so failures reproduce. */
export function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
