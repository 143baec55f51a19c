// Reciprocal rank fusion: 1 / (RRF_K + rank) summed over the rankings holding a key.

import assert from "node:assert/strict";
import { test } from "node:test";
import { fuseRanks, RRF_K } from "../../../src/store/search/fuse.ts";

test("the constant is 60", () => {
  assert.equal(RRF_K, 60);
});

test("scores sum 1/(60 + rank) over the rankings; both-ranked beats first-in-one", () => {
  const vector = [
    { key: "a", window: 2 },
    { key: "b", window: 0 },
    { key: "c", window: 1 },
  ];
  const keyword = [{ key: "d" }, { key: "b" }, { key: "a" }];
  const fused = fuseRanks([vector, keyword], 10);
  const expected = new Map([
    ["a", 1 / 61 + 1 / 63],
    ["b", 1 / 62 + 1 / 62],
    ["c", 1 / 63],
    ["d", 1 / 61],
  ]);
  assert.deepEqual(
    fused.map((r) => r.key),
    ["a", "b", "d", "c"],
  );
  for (const row of fused) assert.equal(row.score, expected.get(row.key));
  assert.equal(fused.find((r) => r.key === "a")?.window, 2, "the vector ranking's window");
  assert.equal(fused.find((r) => r.key === "d")?.window, undefined);
});

test("ties keep the order of first appearance; k cuts", () => {
  const fused = fuseRanks([[{ key: "x" }], [{ key: "y" }]], 1);
  assert.deepEqual(fused, [{ key: "x", score: 1 / 61 }]);
});
