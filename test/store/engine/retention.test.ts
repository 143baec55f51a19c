import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import type { Store } from "../../../src/store/engine/index.ts";
import { freshStore } from "./fixture.ts";

const main = { collection: "c", branch: "main" };
const later = () => Date.now() + 60_000;

function retention(versions: number | null, days: number | null, extra: object = {}) {
  return {
    releaseMaxRows: 1024,
    releaseBatch: 1_000_000,
    keep: { versions, days },
    ...extra,
  };
}

/** 12 commits, each rewriting 200 records so released versions hold nodes of their own. */
function churn(store: Store): number[] {
  store.createCollection("c");
  const versions: number[] = [];
  for (let round = 0; round < 12; round++) {
    const records = [];
    for (let i = 0; i < 200; i++)
      records.push({ key: `k${i}`, value: { round, pad: "r".repeat(100) } });
    versions.push(store.put(main, records).version);
  }
  return versions;
}

const readable = (store: Store, version: number) => {
  try {
    store.get({ ...main, version }, "k0");
    return true;
  } catch (error) {
    if (error instanceof SkeinError && error.code === "version_not_found") return false;
    throw error;
  }
};

describe("retention", () => {
  // [keep.versions, keep.days, versions expected readable of the 13 (create + 12 commits)]
  const table: [number | null, number | null, number][] = [
    [3, 0, 3], // head + kept window of 2 are never released; rows past rank 3 go
    [6, 0, 6],
    [1, 0, 3], // keep.versions below the record window: the window still holds
    [3, 1, 13], // every version is younger than a day
    [null, 0, 13], // unset: keep everything
    [3, null, 13],
  ];
  for (const [versions, days, expected] of table) {
    test(`keep.versions=${versions} keep.days=${days} → ${expected} versions readable`, async () => {
      const { store } = await freshStore({ keptVersions: 2, retention: retention(versions, days) });
      const all = churn(store);
      const before = store.stats();
      const result = store.release(later());
      const kept = [all[0]! - 1, ...all].filter((v) => readable(store, v));
      assert.equal(kept.length, expected, JSON.stringify(result));
      // The newest versions are the ones kept, the head always among them.
      assert.deepEqual(kept, [all[0]! - 1, ...all].slice(13 - expected));
      if (versions === null || days === null) {
        assert.deepEqual(result.unset, [
          versions === null ? "retention.keep.versions" : "retention.keep.days",
        ]);
      }
      if (13 - expected > 0) {
        assert.equal(result.released, 13 - expected);
        const after = store.stats();
        assert.ok(after.node_entries < before.node_entries, "released nodes are freed");
        assert.ok(after.node_bytes < before.node_bytes, "node bytes fall after a release");
        assert.equal(store.get(main, "k0").found, true);
      }
    });
  }

  test("release_max_rows bounds the rows one release considers", async () => {
    const { store } = await freshStore({
      keptVersions: 2,
      retention: retention(1, 0, { releaseMaxRows: 4 }),
    });
    churn(store);
    const first = store.release(later());
    assert.equal(first.considered, 4);
    assert.equal(first.released, 4);
    // 10 history rows in all: 4, 4, then the last 2.
    assert.equal(store.release(later()).released, 4);
    assert.equal(store.release(later()).released, 2);
    assert.equal(store.release(later()).released, 0);
  });

  test("the driver releases after release_batch branch advances", async () => {
    const { store } = await freshStore({
      keptVersions: 1,
      retention: retention(1, 0, { releaseBatch: 5 }),
    });
    store.createCollection("c");
    const versions = [];
    for (let i = 0; i < 5; i++) versions.push(store.put(main, [{ key: "a", value: i }]).version);
    // Rows older than the head and the one kept head are released at the 5th advance
    // (keep.days = 0 allows anything older than now).
    assert.equal(readable(store, versions[0]!), false);
    assert.equal(readable(store, versions[4]!), true);
    assert.equal(readable(store, versions[3]!), true);
  });
});
