// Raw byte values (binary leaf items, written only by the store's own writers: the
// embedding walk's vectors) through every engine path that reads leaf items: get, list,
// scans, changes, merges and reverts, tags, the node sweep and reopening. (A backup copies
// LMDB's pages and reads no item.) Equal bytes read from two different nodes must count as the same value (a diff
// or merge compares them by content), and JSON paths must refuse bytes, never crash.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { getItem } from "../../../src/store/tree/cursor.ts";
import { freshStore } from "./fixture.ts";

const C = "vectors~embed";
const main = { collection: C, branch: "main" };

/** Deterministic bytes of `length` for record `i` (tag varies the content). */
function bytesOf(i: number, tag = 0, length = 300): Uint8Array {
  const out = new Uint8Array(length);
  for (let b = 0; b < length; b++) out[b] = (i * 31 + b * 7 + tag * 13) & 0xff;
  return out;
}

const key = (i: number) => `k${String(i).padStart(5, "0")}`;

function bytesEdits(from: number, to: number, tag = 0): [string, Uint8Array][] {
  const out: [string, Uint8Array][] = [];
  for (let i = from; i < to; i++) out.push([key(i), bytesOf(i, tag)]);
  return out;
}

async function seeded(count = 400) {
  const fixture = await freshStore({}, 2);
  fixture.store.createCollection(C);
  fixture.store.edit(main, { puts: [], bytes: bytesEdits(0, count), deletes: [] });
  return fixture;
}

describe("raw byte values in the engine", () => {
  test("get, list and takeItems answer the bytes written; JSON text and bytes live side by side", async () => {
    const { store } = await seeded();
    store.edit(main, { puts: [{ key: "json", value: { a: 1 } }], deletes: [] });
    const got = store.get(main, key(7));
    assert.ok(got.value instanceof Uint8Array);
    assert.deepEqual(Buffer.from(got.value), Buffer.from(bytesOf(7)));
    assert.deepEqual(store.get(main, "json").value, { a: 1 });
    const page = store.list(main, { limit: 500 });
    assert.equal(page.rows.length, 401);
    for (const row of page.rows) {
      if (row.key === "json") continue;
      const i = Number(row.key.slice(1));
      assert.deepEqual(Buffer.from(row.value as Uint8Array), Buffer.from(bytesOf(i)), row.key);
    }
    const scan = store.scanRecords(main);
    try {
      const items = scan.takeItems(1000);
      assert.equal(items.length, 401);
      assert.equal(typeof items.find(([k]) => k === "json")![1], "string");
      assert.ok(items.find(([k]) => k === key(0))![1] instanceof Uint8Array);
    } finally {
      scan.close();
    }
  });

  test("a JSON scan (what queries read) refuses a raw record with a code, not a crash", async () => {
    const { store } = await seeded(3);
    const scan = store.scanRecords(main);
    try {
      assert.throws(() => scan.take(10), { code: "internal_error" });
    } finally {
      scan.close();
    }
  });

  test("nodes are sized in bytes, and a reopened store reads the same bytes from disk", async () => {
    const { store, reopen } = await seeded(2000);
    // 2,000 × (300 bytes + key) is about 620 KB: some 75 leaves of about 8 KiB each.
    const nodes = store.stats();
    assert.ok(nodes.node_entries > 40 && nodes.node_entries < 200, `${nodes.node_entries} nodes`);
    const again = await reopen();
    for (const i of [0, 999, 1999]) {
      const value = again.get(main, key(i)).value as Uint8Array;
      assert.deepEqual(Buffer.from(value), Buffer.from(bytesOf(i)));
    }
    // The leaf holds the bytes themselves (a MessagePack bin), not a text standing for them.
    const { version } = again.resolve(C, "main", undefined);
    const shard = again.ctx.shardOf(key(5));
    const item = getItem(again.ctx.readers[shard]!, version.roots[shard] ?? null, key(5));
    assert.ok(item instanceof Uint8Array);
  });

  test("changes: equal bytes in rewritten leaves are no change; changed bytes are modified", async () => {
    const { store: first, reopen } = await seeded();
    let store = first;
    const before = store.history(C, "main", undefined, 1).rows[0]!.version;
    // Rewriting one key rewrites its leaf: its neighbours' equal bytes come back from a new
    // node as new objects, and must not be reported.
    store.edit(main, { puts: [], bytes: [[key(100), bytesOf(100, 1)]], deletes: [key(200)] });
    store.edit(main, { puts: [], bytes: [[key(150), bytesOf(150)]], deletes: [] });
    // Reopened, so the old and the new leaves are decoded apart (a commit's new leaf shares
    // its unchanged items with the leaf it replaced while both are cached).
    store = await reopen();
    const page = store.changes({
      collection: C,
      branch: "main",
      fromBranch: undefined,
      from: before,
      to: undefined,
      cursor: undefined,
    });
    assert.deepEqual(
      page.changes.map((c) => [c.key, c.type]),
      [
        [key(100), "modified"],
        [key(200), "removed"],
      ],
    );
    const changed = page.changes[0]!;
    assert.deepEqual(Buffer.from(changed.from as Uint8Array), Buffer.from(bytesOf(100)));
    assert.deepEqual(Buffer.from(changed.to as Uint8Array), Buffer.from(bytesOf(100, 1)));
  });

  test("merges: the same bytes on both sides are no conflict; different bytes are, as values", async () => {
    const { store } = await seeded();
    store.createBranch(C, "side", { branch: "main", version: undefined });
    const side = { collection: C, branch: "side" };
    // Both sides write the same new bytes to k00010, and different bytes to k00020; each
    // side changes a key of its own.
    store.edit(main, {
      puts: [],
      bytes: [
        [key(10), bytesOf(10, 5)],
        [key(20), bytesOf(20, 6)],
        [key(30), bytesOf(30, 7)],
      ],
      deletes: [],
    });
    store.edit(side, {
      puts: [],
      bytes: [
        [key(10), bytesOf(10, 5)],
        [key(20), bytesOf(20, 8)],
        [key(40), bytesOf(40, 9)],
      ],
      deletes: [],
    });
    const dry = store.merge(C, "side", "main", { strategy: "fail", dryRun: true });
    assert.equal(dry.conflict_count, 1);
    const conflict = dry.conflicts[0]!;
    assert.equal(conflict.key, key(20));
    assert.deepEqual(Buffer.from(conflict.base as Uint8Array), Buffer.from(bytesOf(20)));
    assert.deepEqual(Buffer.from(conflict.ours as Uint8Array), Buffer.from(bytesOf(20, 6)));
    assert.deepEqual(Buffer.from(conflict.theirs as Uint8Array), Buffer.from(bytesOf(20, 8)));
    const merged = store.merge(C, "side", "main", { strategy: "theirs" });
    assert.equal(merged.outcome, "merged");
    for (const [i, tag] of [
      [10, 5],
      [20, 8],
      [30, 7],
      [40, 9],
    ] as const) {
      const value = store.get(main, key(i)).value as Uint8Array;
      assert.deepEqual(Buffer.from(value), Buffer.from(bytesOf(i, tag)), key(i));
    }
    const reverted = store.revert(C, "main", merged.receipt!.version);
    assert.equal(reverted.outcome, "reverted");
    const back = store.get(main, key(40)).value as Uint8Array;
    assert.deepEqual(Buffer.from(back), Buffer.from(bytesOf(40)));
  });

  test("tags and the node sweep keep what is reachable and free the rest", async () => {
    const { store } = await seeded(2000);
    const tag = store.createTag(C, "t1");
    for (let round = 1; round <= 3; round++) {
      store.edit(main, { puts: [], bytes: bytesEdits(0, 2000, round), deletes: [] });
    }
    const full = store.stats().node_entries;
    const tagged = store.get({ collection: C, branch: "main", version: tag.name }, key(5));
    assert.deepEqual(Buffer.from(tagged.value as Uint8Array), Buffer.from(bytesOf(5)));
    store.deleteTag(C, tag.name);
    store.deleteCollection(C);
    assert.ok(store.stats().node_entries < full / 10, `${store.stats().node_entries} of ${full}`);
  });
});
