/**
 * Creating and opening a store directory. `createStore` is what `serve --create` calls: it
 * takes a new (or empty) directory and writes the store's fixed shape (shards, cache bytes,
 * executor threads) once. `openStore` reopens it with the service file's settings; an
 * unknown format or a directory without a store is refused.
 */

import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import {
  type MetaRecord,
  STORE_FORMAT,
  STORE_FORMATS_READ,
  VERSION_KEY,
} from "../codec/records.ts";
import { storeError } from "../errors.ts";
import { StoreDatabase } from "../lmdb/database.ts";
import { StoreContext } from "./context.ts";
import {
  count,
  resolveSettings,
  type StoreCreateOptions,
  type StoreEngineOptions,
} from "./options.ts";
import { Store } from "./store.ts";

const META_KEY = "store";

export async function createStore(dir: string, create: StoreCreateOptions): Promise<void> {
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    if (readdirSync(dir).length > 0) throw storeError("store_exists", `${dir} is not empty`);
  }
  const db = new StoreDatabase(dir);
  try {
    const meta: MetaRecord = {
      format: STORE_FORMAT,
      shards: count(create.shards),
      cacheBytesTotal: count(create.cacheBytesTotal),
      executorThreads: count(create.executorThreads),
      createdAt: new Date().toISOString(),
    };
    db.commit(() => {
      db.meta.putSync(META_KEY, meta);
      db.counters.putSync(VERSION_KEY, 1);
    });
  } finally {
    await db.close();
  }
}

export function openStore(options: StoreEngineOptions): Store {
  // Checked before opening: LMDB would otherwise create an empty environment here.
  if (!existsSync(join(options.dataDir, "data.mdb"))) {
    throw storeError("store_missing", `${options.dataDir} holds no store; create it first`);
  }
  const db = new StoreDatabase(options.dataDir);
  const meta = db.meta.get(META_KEY);
  if (meta === undefined) {
    void db.close();
    throw storeError("store_missing", `${options.dataDir} holds no store; create it first`);
  }
  if (!STORE_FORMATS_READ.includes(meta.format)) {
    void db.close();
    throw storeError(
      "store_format",
      `store format ${meta.format}; this build reads ${STORE_FORMATS_READ.join(" and ")}`,
    );
  }
  // Raised before anything is written: this build may write what an older one misreads.
  const current: MetaRecord =
    meta.format === STORE_FORMAT ? meta : { ...meta, format: STORE_FORMAT };
  if (current !== meta) db.commit(() => db.meta.putSync(META_KEY, current));
  const next = db.counters.get(VERSION_KEY) ?? 1;
  return new Store(new StoreContext(db, resolveSettings(options), current, next));
}
