import assert from "node:assert/strict";
import { test } from "node:test";
import { byShard } from "../../../src/store/engine/commit.ts";
import type { StoreContext } from "../../../src/store/engine/context.ts";
import type { Edit } from "../../../src/store/tree/chunker.ts";
import { rng } from "./fixture.ts";

// byShard keeps a group already in strictly ascending key order as it is and sorts the
// others (a stable sort, then the last edit of each key): both must give what a sort of
// every group gives, whatever the order and repeats of the keys.
const ctx = { shardOf: (key: string) => key.charCodeAt(key.length - 1) % 3 } as StoreContext;

function sortedGroups(edits: readonly Edit[]): Map<number, Edit[]> {
  const groups = new Map<number, Edit[]>();
  for (const edit of edits) {
    const shard = ctx.shardOf(edit[0]);
    groups.set(shard, [...(groups.get(shard) ?? []), edit]);
  }
  for (const [shard, group] of groups) {
    const last = new Map<string, Edit>();
    for (const edit of group) last.set(edit[0], edit);
    groups.set(
      shard,
      [...last.values()].sort((a, b) => (a[0] < b[0] ? -1 : 1)),
    );
  }
  return groups;
}

test("byShard groups keys in order, and the last edit of a key wins, sorted or not", () => {
  const next = rng(36);
  const shapes: Edit[][] = [
    [],
    Array.from({ length: 300 }, (_, i) => [`k${String(i).padStart(4, "0")}`, `${i}`] as Edit),
    [
      ["a1", undefined],
      ["a1", "put after delete"],
      ["b2", "x"],
    ],
  ];
  for (let round = 0; round < 50; round++) {
    const count = Math.floor(next() * 200);
    shapes.push(
      Array.from({ length: count }, (_, i) => {
        const key = `k${Math.floor(next() * (round % 2 === 0 ? 1000 : 20))}`;
        return [key, next() < 0.2 ? undefined : `v${i}`] as Edit;
      }),
    );
  }
  for (const edits of shapes) {
    const got = byShard(ctx, edits);
    const want = sortedGroups(edits);
    assert.deepEqual(
      new Map([...got].sort((a, b) => a[0] - b[0])),
      new Map([...want].sort((a, b) => a[0] - b[0])),
    );
  }
});
