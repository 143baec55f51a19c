// Rendezvous hashing as a specification: every node computes the same owners from the same
// live set, whatever order it lists them in; a join moves only the shards the newcomer wins
// (about S/N), and a leave moves only the leaver's shards.

import assert from "node:assert/strict";
import { test } from "node:test";
import { desiredOwners } from "../../../src/workflow/cluster/rendezvous.ts";

const S = 256;

function moved(before: readonly (string | undefined)[], after: readonly (string | undefined)[]) {
  return before.filter((owner, shard) => owner !== after[shard]).length;
}

test("the owners depend on the live set only, not on its order; no live node owns nothing", () => {
  assert.deepEqual(desiredOwners(["a", "b", "c"], S), desiredOwners(["c", "a", "b", "a"], S));
  assert.deepEqual(desiredOwners([], 3), [undefined, undefined, undefined]);
  assert.deepEqual(desiredOwners(["solo"], 3), ["solo", "solo", "solo"]);
});

test("a join moves only the shards the new node wins, about S/N of them", () => {
  const two = desiredOwners(["a", "b"], S);
  const three = desiredOwners(["a", "b", "c"], S);
  for (let shard = 0; shard < S; shard++) {
    if (two[shard] !== three[shard]) assert.equal(three[shard], "c");
  }
  const won = three.filter((o) => o === "c").length;
  assert.equal(moved(two, three), won);
  assert.ok(won > S / 3 / 2 && won < (S / 3) * 2, `c won ${won} of ${S}`);
});

test("a leave moves only the leaver's shards", () => {
  const three = desiredOwners(["a", "b", "c"], S);
  const two = desiredOwners(["a", "c"], S);
  for (let shard = 0; shard < S; shard++) {
    if (three[shard] !== "b") assert.equal(two[shard], three[shard]);
    else assert.notEqual(two[shard], "b");
  }
});
