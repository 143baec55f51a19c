import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Edit } from "../../../src/store/tree/chunker.ts";
import { getItem, scan, walk } from "../../../src/store/tree/cursor.ts";
import type { Item } from "../../../src/store/tree/node.ts";
import { key, treeFixture, value } from "./helpers.ts";

const { reader, apply } = treeFixture();

function build(n: number, tag = "v"): string | null {
  const edits: Edit[] = [];
  for (let i = 0; i < n; i++) edits.push([key(i), value(i, tag)]);
  return apply(null, edits);
}

function entries(root: string | null): [string, Item][] {
  return [...scan(reader, root, null)];
}

// A deterministic pseudo-random sequence so failures reproduce.
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("tree editing", () => {
  test("a built tree holds every entry in order and answers point lookups", () => {
    const root = build(3000);
    const all = entries(root);
    assert.equal(all.length, 3000);
    assert.deepEqual(all[17], [key(17), value(17)]);
    assert.equal(getItem(reader, root, key(2999)), value(2999));
    assert.equal(getItem(reader, root, "doc-x"), undefined);
  });

  test("edits give exactly the tree built from scratch (history independence)", () => {
    const random = rng(7);
    let root = build(2000);
    const model = new Map<string, string>();
    for (let i = 0; i < 2000; i++) model.set(key(i), value(i));
    for (let round = 0; round < 25; round++) {
      const edits = new Map<string, string | undefined>();
      const count = 1 + Math.floor(random() * 60);
      for (let e = 0; e < count; e++) {
        const k = key(Math.floor(random() * 2600));
        const r = random();
        edits.set(k, r < 0.4 ? undefined : value(Math.floor(r * 1e6), `r${round}`));
      }
      root = apply(root, [...edits]);
      for (const [k, v] of edits) {
        if (v === undefined) model.delete(k);
        else model.set(k, v);
      }
      const sorted = [...model].sort((a, b) => (a[0] < b[0] ? -1 : 1));
      assert.deepEqual(entries(root), sorted, `round ${round}`);
      const scratch = apply(null, sorted);
      assert.equal(root, scratch, `round ${round}: edited tree differs from a fresh build`);
    }
  });

  test("a short run after a long one in the same edit keeps none of the long run's entries", () => {
    // The editor re-chunks each run of nodes in scratch arrays reused from run to run: a
    // run shorter than the one before must not pick up the entries left past its end.
    const model = new Map<string, string>();
    for (let i = 0; i < 3000; i++) model.set(key(i), value(i));
    const edits: Edit[] = [];
    for (let i = 100; i < 900; i++) edits.push([key(i), value(i, "long")]);
    edits.push([key(2500), undefined], [key(2990), value(2990, "short")]);
    const root = apply(build(3000), edits);
    for (const [k, v] of edits) {
      if (v === undefined) model.delete(k);
      else model.set(k, v as string);
    }
    const sorted = [...model].sort((a, b) => (a[0] < b[0] ? -1 : 1));
    assert.deepEqual(entries(root), sorted);
    assert.equal(root, apply(null, sorted));
  });

  test("values of every size, including above a node's target, keep history independence", () => {
    const random = rng(11);
    const sized = (n: number) => "s".repeat(Math.floor(random() * n));
    const model = new Map<string, string>();
    let root: string | null = null;
    for (let round = 0; round < 15; round++) {
      const edits = new Map<string, string | undefined>();
      for (let e = 0; e < 80; e++) {
        const k = key(Math.floor(random() * 400));
        const r = random();
        edits.set(k, r < 0.25 ? undefined : sized(r < 0.3 ? 20000 : 400));
      }
      root = apply(root, [...edits]);
      for (const [k, v] of edits) {
        if (v === undefined) model.delete(k);
        else model.set(k, v);
      }
      const sorted = [...model].sort((a, b) => (a[0] < b[0] ? -1 : 1));
      assert.deepEqual(entries(root), sorted);
      assert.equal(root, apply(null, sorted), `round ${round}`);
    }
  });

  test("deleting every key empties the tree", () => {
    const root = build(500);
    const edits: Edit[] = [];
    for (let i = 0; i < 500; i++) edits.push([key(i), undefined]);
    assert.equal(apply(root, edits), null);
  });

  test("scan after a key starts just above it", () => {
    const root = build(1000);
    const page = [];
    for (const entry of scan(reader, root, key(499))) {
      page.push(entry[0]);
      if (page.length === 3) break;
    }
    assert.deepEqual(page, [key(500), key(501), key(502)]);
  });

  test("one edit writes only the nodes on its path", () => {
    const root = build(20000);
    let depth = 0;
    let node = reader.load(root!);
    depth = node.level + 1;
    const before = new Set<string>();
    walk(reader, root, (n) => before.add(n.hash));
    const next = apply(root, [[key(12345), value(1, "changed")]]);
    const fresh: string[] = [];
    walk(reader, next, (n) => {
      if (!before.has(n.hash)) fresh.push(n.hash);
    });
    node = reader.load(next!);
    assert.ok(fresh.length <= depth + 2, `${fresh.length} new nodes for depth ${depth}`);
  });
});
