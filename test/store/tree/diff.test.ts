import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Edit } from "../../../src/store/tree/chunker.ts";
import { type Change, NodeBudgetExceeded, TreeDiff } from "../../../src/store/tree/diff.ts";
import { key, treeFixture, value } from "./helpers.ts";

const { reader, apply } = treeFixture();

function all(diff: TreeDiff): Change[] {
  const out: Change[] = [];
  for (let c = diff.next(); c !== undefined; c = diff.next()) out.push(c);
  return out;
}

const base: Edit[] = [];
for (let i = 0; i < 20000; i++) base.push([key(i * 2), value(i)]);
const root = apply(null, base);

describe("structural diff", () => {
  test("reports added, removed and modified keys in key order", () => {
    const next = apply(root, [
      [key(1), value(1, "new")],
      [key(10), undefined],
      [key(20000), value(5, "changed")],
      [key(39999), value(7, "tail")],
    ]);
    const changes = all(new TreeDiff(reader, root, next, { budget: 1000 }));
    assert.deepEqual(
      changes.map((c) => [c.key, c.type]),
      [
        [key(1), "added"],
        [key(10), "removed"],
        [key(20000), "modified"],
        [key(39999), "added"],
      ],
    );
    assert.equal(changes[2]!.from, value(10000));
    assert.equal(changes[2]!.to, value(5, "changed"));
  });

  test("equal trees load nothing; an empty side lists everything", () => {
    const same = new TreeDiff(reader, root, root, { budget: 10 });
    assert.equal(same.next(), undefined);
    assert.equal(same.loaded, 0);
    const small = apply(null, base.slice(0, 50));
    assert.equal(all(new TreeDiff(reader, null, small, { budget: 100 })).length, 50);
  });

  test("nodes loaded grow with the number of changes, not the tree size", () => {
    const loadedFor = (d: number) => {
      const edits: Edit[] = [];
      for (let i = 0; i < d; i++) edits.push([key(Math.floor((i * 19997) / d) * 2), value(i, "d")]);
      const next = apply(root, edits);
      const diff = new TreeDiff(reader, root, next, { budget: 1e9 });
      assert.equal(all(diff).length, d);
      return diff.loaded;
    };
    const one = loadedFor(1);
    const ten = loadedFor(10);
    assert.ok(one <= 10, `1 change loaded ${one} nodes`);
    assert.ok(ten <= 10 * one, `10 changes loaded ${ten} nodes`);
  });

  test("the node budget stops a large diff with NodeBudgetExceeded", () => {
    const edits: Edit[] = base.slice(0, 5000).map(([k]) => [k, value(0, "all")]);
    const next = apply(root, edits);
    assert.throws(() => all(new TreeDiff(reader, root, next, { budget: 20 })), NodeBudgetExceeded);
  });

  test("starting after a key resumes the same sequence", () => {
    const next = apply(root, [
      [key(3), value(3, "a")],
      [key(5), value(5, "b")],
      [key(7), value(7, "c")],
    ]);
    const rest = all(new TreeDiff(reader, root, next, { after: key(3), budget: 100 }));
    assert.deepEqual(
      rest.map((c) => c.key),
      [key(5), key(7)],
    );
  });
});
