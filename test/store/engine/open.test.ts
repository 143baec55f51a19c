import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import { STORE_FORMAT } from "../../../src/store/codec/records.ts";
import { createStore, openStore } from "../../../src/store/engine/index.ts";
import { StoreDatabase } from "../../../src/store/lmdb/database.ts";
import { engineOptions } from "./fixture.ts";

const parent = mkdtempSync(join(tmpdir(), "skein-open-"));
after(() => rmSync(parent, { recursive: true, force: true }));
const create = { shards: 2, cacheBytesTotal: 1 << 20, executorThreads: 1 };
const code = (c: string) => (e: unknown) => e instanceof SkeinError && e.code === c;

describe("createStore and openStore", () => {
  test("create makes a new directory and records the store's shape", async () => {
    const dir = join(parent, "new");
    await createStore(dir, { shards: 3n, cacheBytesTotal: 1n << 20n, executorThreads: 2n });
    const store = openStore(engineOptions(dir));
    assert.equal(store.shards, 3);
    assert.equal(store.ctx.meta.executorThreads, 2);
    await store.close();
  });

  test("create accepts an existing empty directory (serve --create may make it first)", async () => {
    const dir = join(parent, "empty");
    mkdirSync(dir);
    await createStore(dir, create);
    await openStore(engineOptions(dir)).close();
  });

  test("create refuses a directory that is not empty: store_exists", async () => {
    const dir = join(parent, "full");
    mkdirSync(dir);
    writeFileSync(join(dir, "file"), "x");
    await assert.rejects(createStore(dir, create), code("store_exists"));
  });

  test("open refuses a directory without a store: store_missing", () => {
    const dir = join(parent, "nothing");
    mkdirSync(dir);
    assert.throws(() => openStore(engineOptions(dir)), code("store_missing"));
  });

  test("open raises a format-1 store (before raw-byte items) to the current format", async () => {
    const dir = join(parent, "format-1");
    await createStore(dir, create);
    let db = new StoreDatabase(dir);
    const meta = db.meta.get("store")!;
    db.commit(() => db.meta.putSync("store", { ...meta, format: 1 }));
    await db.close();
    const store = openStore(engineOptions(dir));
    assert.equal(store.ctx.meta.format, STORE_FORMAT);
    await store.close();
    db = new StoreDatabase(dir);
    assert.equal(db.meta.get("store")!.format, STORE_FORMAT);
    await db.close();
  });

  test("open refuses a newer format: store_format", async () => {
    const dir = join(parent, "future");
    await createStore(dir, create);
    const db = new StoreDatabase(dir);
    const meta = db.meta.get("store")!;
    db.commit(() => db.meta.putSync("store", { ...meta, format: STORE_FORMAT + 1 }));
    await db.close();
    assert.throws(() => openStore(engineOptions(dir)), code("store_format"));
  });
});
