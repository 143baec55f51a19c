import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Edit } from "../../../src/store/tree/chunker.ts";
import { walk } from "../../../src/store/tree/cursor.ts";
import { chunkEnds, entryBytes, TARGET_NODE_BYTES } from "../../../src/store/tree/splitter.ts";
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

  test("golden: a dataset of raw byte items (MessagePack bin) is frozen too", () => {
    // Float32-sized runs of bytes, as the embedding walk stores vectors, and a JSON text
    // every 50th key, so nodes mixing both kinds occur.
    const edits: Edit[] = [];
    for (let i = 0; i < 3000; i++) {
      if (i % 50 === 0) {
        edits.push([key(i), value(i)]);
        continue;
      }
      const bytes = new Uint8Array(4 + 16 * 4);
      for (let b = 0; b < bytes.length; b++) bytes[b] = (i * 131 + b * 17) & 0xff;
      edits.push([key(i), bytes]);
    }
    const root = apply(null, edits);
    let nodes = 0;
    walk(reader, root, () => nodes++);
    assert.equal(root, "ae706c408cdbf07f659c98fdcc069cc5419c9a33");
    assert.ok(nodes > 10);
  });

  test("raw bytes count their byte length toward a node's size", () => {
    assert.equal(entryBytes("k", new Uint8Array(1540)), 1 + 1540 + 4);
    assert.equal(entryBytes("k", "é".repeat(10)), 1 + 10 + 4);
  });
});
