// The HNSW index of a head: identical vectors share one point (a cluster of duplicates is
// never lost), records are replaced and removed in place, a checkpoint round-trips.

import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { exactSearch } from "../../../src/store/search/exact.ts";
import { HnswIndex } from "../../../src/store/search/hnsw.ts";

const dir = mkdtempSync(join(tmpdir(), "skein-hnsw-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function vector(seed: number, dims = 32): Float32Array {
  let s = seed + 1;
  return Float32Array.from({ length: dims }, () => {
    s = (s * 16807) % 2147483647;
    return s / 2147483647 - 0.5;
  });
}

test("200 copies of one vector and 800 others: the copies are all found", () => {
  const index = new HnswIndex(32, 1);
  const same = vector(0);
  const records = [
    ...Array.from({ length: 200 }, (_, i) => ({
      key: `dup${String(i).padStart(3, "0")}`,
      windows: [same],
    })),
    ...Array.from({ length: 800 }, (_, i) => ({ key: `r${i}`, windows: [vector(i + 1)] })),
  ];
  index.set(records);
  assert.equal(index.records, 1000);
  const hits = index.search(same, 150);
  assert.equal(hits.length, 150);
  assert.ok(hits.every((h) => h.key.startsWith("dup") && h.score > 0.9999));
  assert.equal(hits[0]!.key, "dup000", "members of a point in key order");
});

test("replaced and removed records; answers equal exact search; a checkpoint round-trips", () => {
  const index = new HnswIndex(32, 1);
  const records = Array.from({ length: 300 }, (_, i) => ({
    key: `k${i}`,
    windows: [vector(i), vector(i + 1000)],
  }));
  index.set(records);
  index.set(records.slice(0, 50).map((r, i) => ({ key: r.key, windows: [vector(i + 5000)] })));
  for (let i = 50; i < 80; i++) index.remove(`k${i}`);
  index.version = 7;
  const now = [
    ...records.slice(0, 50).map((r, i) => ({ key: r.key, windows: [vector(i + 5000)] })),
    ...records.slice(80),
  ];
  assert.equal(index.records, now.length);
  const question = vector(42);
  const expected = exactSearch(question, now, 10);
  const got = index.search(question, 10);
  assert.deepEqual(
    got.map((h) => [h.key, h.window]),
    expected.map((h) => [h.key, h.window]),
  );
  const checkpoint = index.save(dir, "x", { collection: "c", branch: "main" });
  assert.equal(checkpoint.version, 7);
  assert.deepEqual(readdirSync(dir).sort(), [checkpoint.index, checkpoint.labels, "x.json"].sort());
  const loaded = HnswIndex.load(dir, checkpoint);
  assert.equal(loaded.records, now.length);
  assert.deepEqual(
    loaded.search(question, 10).map((h) => h.key),
    got.map((h) => h.key),
  );
  loaded.remove("k0");
  assert.equal(loaded.records, now.length - 1);
});
