import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import { Packr } from "msgpackr";
import { nodeCodec } from "../../../src/store/codec/node-codec.ts";
import { nodeAddress } from "../../../src/store/tree/hash.ts";

// A plain msgpackr instance with the format's options and no shared scratch buffer: the reference.
const reference = new Packr({ useRecords: false, variableMapSize: true });

function node(seed: number, entries: number): [level: number, keys: string[], items: string[]] {
  const keys: string[] = [];
  const items: string[] = [];
  for (let i = 0; i < entries; i++) {
    keys.push(`doc-${String(seed * 1000 + i).padStart(7, "0")}`);
    // Values of varied length and script, so string headers of every width occur.
    items.push(JSON.stringify({ seed, i, pad: "ü€𝄞x".repeat((seed * 7 + i) % 90) }));
  }
  return [seed % 3, keys, items];
}

describe("node codec", () => {
  test("encodings stay intact while the shared scratch buffer is reused", () => {
    // About 12 MiB of nodes, every one packed in the same scratch buffer: each encoding
    // must be its own bytes, not a view a later pack overwrites.
    const encoded: { bytes: Uint8Array; copy: Buffer; seed: number }[] = [];
    for (let seed = 0; seed < 1500; seed++) {
      const [level, keys, items] = node(seed, 40);
      const bytes = nodeCodec.encode(level, keys, items);
      encoded.push({ bytes, copy: Buffer.from(bytes), seed });
    }
    for (const { bytes, copy, seed } of encoded) {
      assert.deepEqual(Buffer.from(bytes), copy, `node ${seed} was overwritten`);
      const [level, keys, items] = node(seed, 40);
      assert.deepEqual(Buffer.from(bytes), reference.pack([level, keys, items]), `node ${seed}`);
      const decoded = nodeCodec.decode(nodeAddress(bytes), bytes);
      assert.deepEqual([decoded.level, decoded.keys, decoded.items], [level, keys, items]);
    }
  });

  test("a node larger than the scratch buffer is encoded whole, and the next one too", () => {
    const [level, keys, items] = node(7, 20000);
    const bytes = nodeCodec.encode(level, keys, items);
    assert.ok(bytes.length > 4 << 20);
    const [nextLevel, nextKeys, nextItems] = node(8, 40);
    const next = nodeCodec.encode(nextLevel, nextKeys, nextItems);
    assert.deepEqual(Buffer.from(bytes), reference.pack([level, keys, items]));
    assert.deepEqual(Buffer.from(next), reference.pack([nextLevel, nextKeys, nextItems]));
  });

  test("an arena's memory is reused only once every node placed in it is released", () => {
    // Nodes of about 3 KiB: several arenas' worth. One node of the first arenas is kept
    // unreleased; every other node is released once checked, as the pipeline does.
    const kept: { bytes: Uint8Array; copy: Buffer }[] = [];
    const releasedBuffers = new Set<ArrayBufferLike>();
    let reused = 0;
    for (let seed = 0; seed < 3000; seed++) {
      const [level, keys, items] = node(seed, 12);
      const bytes = nodeCodec.encode(level, keys, items);
      assert.deepEqual(Buffer.from(bytes), reference.pack([level, keys, items]), `node ${seed}`);
      if (releasedBuffers.has(bytes.buffer)) reused++;
      if (seed % 1000 === 0) {
        kept.push({ bytes, copy: Buffer.from(bytes) });
        continue;
      }
      releasedBuffers.add(bytes.buffer);
      nodeCodec.release(bytes);
    }
    assert.ok(reused > 0, "released arenas were not reused");
    // A reused arena is filled from its start, so reusing a kept node's arena would
    // overwrite it.
    for (const { bytes, copy } of kept) {
      assert.deepEqual(Buffer.from(bytes), copy, "an unreleased node was overwritten");
    }
  });

  test("the address is the first 20 bytes of SHA-256 of the encoding, in hex", () => {
    const [level, keys, items] = node(3, 10);
    const bytes = nodeCodec.encode(level, keys, items);
    const expected = createHash("sha256").update(bytes).digest("hex").slice(0, 40);
    assert.equal(nodeAddress(bytes), expected);
  });

  test("a raw byte item packs as a MessagePack bin and decodes to the same bytes", () => {
    const bytes = new Uint8Array(300).map((_, i) => (i * 37) & 0xff);
    const keys = ["a", "b", "c"];
    const items = ['{"x":1}', bytes, new Uint8Array(0)];
    const encoded = nodeCodec.encode(0, keys, items);
    assert.deepEqual(Buffer.from(encoded), reference.pack([0, keys, items]));
    // fixarray 3, level 0, fixarray 3 of fixstr keys, fixarray 3: fixstr, bin 16, bin 8.
    const itemsAt = 1 + 1 + 1 + 3 * 2 + 1;
    assert.equal(encoded[itemsAt], 0xa7);
    const binAt = itemsAt + 1 + 7;
    assert.deepEqual([...encoded.subarray(binAt, binAt + 3)], [0xc5, 0x01, 0x2c]);
    assert.deepEqual([...encoded.subarray(binAt + 3 + 300)], [0xc4, 0x00]);
    const decoded = nodeCodec.decode(nodeAddress(encoded), encoded);
    assert.equal(decoded.items[0], '{"x":1}');
    assert.ok(decoded.items[1] instanceof Uint8Array);
    assert.deepEqual(Buffer.from(decoded.items[1]), Buffer.from(bytes));
    assert.equal((decoded.items[2] as Uint8Array).byteLength, 0);
    assert.equal(decoded.size, encoded.length);
  });
});
