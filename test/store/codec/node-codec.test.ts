import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import { Packr } from "msgpackr";
import { nodeCodec } from "../../../src/store/codec/node-codec.ts";
import { nodeAddress } from "../../../src/store/tree/hash.ts";

// A plain msgpackr instance with the format's options and no shared arena: the reference.
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
  test("encodings stay intact after the shared arena is exhausted and replaced", () => {
    // About 12 MiB of nodes: several arenas, so earlier views must survive later packs.
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

  test("a node larger than the whole arena is encoded whole", () => {
    const [level, keys, items] = node(7, 20000);
    const bytes = nodeCodec.encode(level, keys, items);
    assert.ok(bytes.length > 4 << 20);
    assert.deepEqual(Buffer.from(bytes), reference.pack([level, keys, items]));
  });

  test("the address is the first 20 bytes of SHA-256 of the encoding, in hex", () => {
    const [level, keys, items] = node(3, 10);
    const bytes = nodeCodec.encode(level, keys, items);
    const expected = createHash("sha256").update(bytes).digest("hex").slice(0, 40);
    assert.equal(nodeAddress(bytes), expected);
  });
});
