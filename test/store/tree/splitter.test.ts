import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Edit } from "../../../src/store/tree/chunker.ts";
import { walk } from "../../../src/store/tree/cursor.ts";
import { chunkEnds, TARGET_NODE_BYTES } from "../../../src/store/tree/splitter.ts";
import { key, treeFixture, value } from "./helpers.ts";

const { reader, apply } = treeFixture();

describe("splitter", () => {
  test("leaf sizes centre on the target and are rarely far above it", () => {
    const keys: string[] = [];
    const items: string[] = [];
    for (let i = 0; i < 50000; i++) {
      keys.push(key(i));
      items.push(value(i));
    }
    const ends = chunkEnds(0, keys, items);
    const sizes = ends.map((end, i) => end - (i === 0 ? 0 : ends[i - 1]!));
    const entry = key(0).length + value(0).length + 4;
    const meanBytes = (50000 / sizes.length) * entry;
    assert.ok(
      meanBytes > TARGET_NODE_BYTES * 0.75 && meanBytes < TARGET_NODE_BYTES * 1.25,
      `mean chunk ${meanBytes} bytes`,
    );
    const large = sizes.filter((s) => s * entry > TARGET_NODE_BYTES * 6).length;
    assert.ok(large / sizes.length < 0.01, `${large} of ${sizes.length} chunks above 6× target`);
  });

  test("golden: the root address of a fixed dataset is frozen (format 1)", () => {
    const edits: Edit[] = [];
    for (let i = 0; i < 10000; i++) edits.push([key(i), value(i)]);
    const root = apply(null, edits);
    let nodes = 0;
    walk(reader, root, () => nodes++);
    assert.equal(root, "aeaebae2e3fc8236f17c9d8ec82d8bcadbda4a37");
    assert.ok(nodes > 10);
  });
});
