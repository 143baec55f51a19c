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

  test("a held version and every newer one stay; older ones go; letting go releases them", async () => {
    const { store } = await freshStore({ keptVersions: 2, retention: retention(1, 0) });
    const all = churn(store);
    const held = all[5]!;
    store.hold("index", "c", "main", held);
    store.hold("other", "c", "main", all[8]!);
    store.release(later());
    const readableNow = all.filter((v) => readable(store, v));
    assert.deepEqual(readableNow, all.slice(5), "the oldest hold keeps it and the newer rows");
    store.hold("index", "c", "main", undefined);
    store.release(later());
    assert.deepEqual(
      all.filter((v) => readable(store, v)),
      all.slice(8),
      "the other holder's version is now the oldest held",
    );
    store.hold("other", "c", "main", undefined);
    store.release(later());
    assert.deepEqual(
      all.filter((v) => readable(store, v)),
      all.slice(-3),
      "no hold: keep.versions and the record window",
    );
  });

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

describe("the release driver across branches", () => {
  /** Commits `n` one-record versions on a branch (created from main when not main). */
  function commits(store: Store, collection: string, branch: string, n: number) {
    if (branch !== "main") store.createBranch(collection, branch);
    for (let i = 0; i < n; i++) store.put({ collection, branch }, [{ key: "k", value: i }]);
  }
  const versionsOf = (store: Store, collection: string, branch: string) =>
    store.history(collection, branch, undefined, 500).rows;

  test("protected rows of the first branches do not starve a later one", async () => {
    // kept_versions 2: each branch record holds 3 versions; the rest are history rows.
    const { store } = await freshStore({
      keptVersions: 2,
      retention: retention(5, 0, { releaseMaxRows: 4 }),
    });
    store.createCollection("c");
    commits(store, "c", "a", 4); // 5 versions: 2 history rows, both protected (ranks 3, 4)
    commits(store, "c", "b", 4); // the same
    commits(store, "c", "z", 12); // 13 versions: 10 history rows, 8 releasable (ranks 5..12)
    const results = Array.from({ length: 8 }, () => store.release(later()));
    assert.deepEqual(
      results.map((r) => r.released),
      [4, 4, 0, 0, 0, 0, 0, 0],
      JSON.stringify(results),
    );
    for (const r of results) assert.ok(r.considered <= 4 + 4, JSON.stringify(r));
    assert.equal(versionsOf(store, "c", "z").length, 5);
    assert.equal(versionsOf(store, "c", "a").length, 5);
    assert.equal(versionsOf(store, "c", "b").length, 5);
    // Oldest first: what z kept are its 5 newest versions.
    const z = versionsOf(store, "c", "z").map((r) => r.version);
    assert.deepEqual(
      z,
      [...z].sort((x, y) => y - x),
    );
  });

  /** A small seeded generator, so a failing case can be replayed. */
  function random(seed: number) {
    let state = seed >>> 0;
    return (below: number) => {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return (((t ^ (t >>> 14)) >>> 0) % below) as number;
    };
  }

  for (const seed of [1, 2, 3, 4, 5]) {
    test(`repeated releases free every releasable row of every branch, never a protected one (seed ${seed})`, async () => {
      const pick = random(seed);
      const keptVersions = 1 + pick(3);
      const keepVersions = 1 + pick(6);
      const releaseMaxRows = 1 + pick(5);
      const { store } = await freshStore({
        keptVersions,
        retention: retention(keepVersions, 0, { releaseMaxRows }),
      });
      const branches: [string, string][] = [];
      for (const collection of ["c1", "c2"]) {
        store.createCollection(collection);
        branches.push([collection, "main"]);
        commits(store, collection, "main", pick(8));
        for (let b = 0; b < 3 + pick(4); b++) {
          const name = `b${b}`;
          commits(store, collection, name, pick(12));
          branches.push([collection, name]);
        }
      }
      // keep.days 0 protects rows not older than `now`: put the cut at some commit's time,
      // so some rows are protected by age too.
      const times = branches.flatMap(([c, b]) => versionsOf(store, c, b).map((r) => r.time));
      const now = Date.parse(times.sort()[Math.floor(times.length * 0.8)]!);
      const before = new Map(branches.map(([c, b]) => [`${c}/${b}`, versionsOf(store, c, b)]));
      const mustKeep = (rows: { time: string }[], rank: number) =>
        rank <= keptVersions || rank < keepVersions || Date.parse(rows[rank]!.time) >= now;
      const total = [...before.values()].reduce((n, rows) => n + rows.length, 0);
      let calls = 0;
      for (let idle = 0; idle < 2; calls++) {
        assert.ok(calls <= total, "releases stop making progress");
        const result = store.release(now);
        assert.ok(result.released <= releaseMaxRows, JSON.stringify(result));
        idle = result.released === 0 ? idle + 1 : 0;
        // Never a protected row.
        for (const [c, b] of branches) {
          const kept = new Set(versionsOf(store, c, b).map((r) => r.version));
          const rows = before.get(`${c}/${b}`)!;
          rows.forEach((row, rank) => {
            if (mustKeep(rows, rank))
              assert.ok(kept.has(row.version), `${c}/${b} lost ${row.version}`);
          });
        }
      }
      // Every releasable row went.
      for (const [c, b] of branches) {
        const rows = before.get(`${c}/${b}`)!;
        const expected = rows.filter((_, rank) => mustKeep(rows, rank)).map((r) => r.version);
        assert.deepEqual(
          versionsOf(store, c, b).map((r) => r.version),
          expected,
          `${c}/${b} (keep ${keepVersions}, kept_versions ${keptVersions})`,
        );
      }
    });
  }
});
