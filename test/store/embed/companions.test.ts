// The stored form of a record's vectors (embed/companions.ts): raw bytes, a uint32 LE
// window count then little-endian float32s, read wherever they sit (a view into a node's
// bytes has any alignment); the earlier `{windows, data: base64}` JSON read as the same
// vectors; and both copied into a vector table in one move, equal to the table built from
// the decoded windows.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  decodeVectors,
  encodeVectors,
  storedVectors,
  VECTORS_HEADER_BYTES,
} from "../../../src/store/embed/companions.ts";
import { TableBuilder } from "../../../src/store/search/table.ts";

const DIMS = 16;

function windowsOf(seed: number, count: number): Float32Array[] {
  return Array.from({ length: count }, (_, w) =>
    Float32Array.from({ length: DIMS }, (_, d) => Math.sin(seed * 7.1 + w * 3.3 + d * 0.77) / 3),
  );
}

/** The earlier stored form of the same windows, as the walk wrote it before. */
function legacyOf(windows: readonly Float32Array[]): { windows: number; data: string } {
  const all = new Float32Array(windows.length * DIMS);
  windows.forEach((v, w) => {
    all.set(v, w * DIMS);
  });
  return { windows: windows.length, data: Buffer.from(all.buffer).toString("base64") };
}

/** `bytes` copied to an odd offset of a larger buffer, as a view (a node's bin is one). */
function unaligned(bytes: Uint8Array): Uint8Array {
  const host = new Uint8Array(bytes.byteLength + 3);
  host.set(bytes, 1);
  return host.subarray(1, 1 + bytes.byteLength);
}

describe("stored vectors", () => {
  test("raw form: a uint32 LE window count, then every window's float32s little-endian", () => {
    const windows = windowsOf(1, 3);
    const bytes = encodeVectors(windows);
    assert.equal(bytes.byteLength, VECTORS_HEADER_BYTES + 3 * DIMS * 4);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    assert.equal(view.getUint32(0, true), 3);
    for (let w = 0; w < 3; w++) {
      for (let d = 0; d < DIMS; d++) {
        assert.equal(view.getFloat32(4 + (w * DIMS + d) * 4, true), windows[w]![d]);
      }
    }
  });

  test("both forms, as items or values, at any alignment, read as the same vectors", () => {
    const windows = windowsOf(2, 2);
    const raw = encodeVectors(windows);
    const legacy = legacyOf(windows);
    const expected = windows.map((v) => [...v]);
    for (const stored of [raw, unaligned(raw), legacy, JSON.stringify(legacy)]) {
      const read = storedVectors(stored);
      assert.equal(read.windows, 2);
      assert.equal(read.bytes.byteLength, 2 * DIMS * 4);
      assert.deepEqual(decodeVectors(stored), expected);
    }
  });

  test("a table reads stored bytes in one copy, equal to the table of decoded windows", () => {
    const records = Array.from({ length: 40 }, (_, i) => ({
      key: `k${String(i).padStart(3, "0")}`,
      windows: windowsOf(i, 1 + (i % 3)),
    }));
    const fromWindows = new TableBuilder(4);
    const fromBytes = new TableBuilder(4);
    records.forEach(({ key, windows }, i) => {
      fromWindows.add(key, windows);
      const stored = i % 2 === 0 ? unaligned(encodeVectors(windows)) : legacyOf(windows);
      const { windows: count, bytes } = storedVectors(stored);
      fromBytes.addBytes(key, count, bytes);
    });
    const a = fromWindows.finish(7);
    const b = fromBytes.finish(7);
    assert.equal(b.dims, DIMS);
    assert.deepEqual(b.keys, a.keys);
    assert.deepEqual([...b.starts], [...a.starts]);
    assert.deepEqual(
      Buffer.from(b.matrix.buffer, b.matrix.byteOffset, b.matrix.byteLength),
      Buffer.from(a.matrix.buffer, a.matrix.byteOffset, a.matrix.byteLength),
    );
  });

  test("stored bytes that are not whole windows of the table's dimensions are refused", () => {
    const builder = new TableBuilder();
    builder.addBytes("a", 1, encodeVectors(windowsOf(1, 1)).subarray(VECTORS_HEADER_BYTES));
    const short = new Uint8Array(DIMS * 4 - 4);
    assert.throws(() => builder.addBytes("b", 1, short), { code: "internal_error" });
    assert.throws(() => builder.addBytes("c", 2, new Uint8Array(DIMS * 4)), {
      code: "internal_error",
    });
  });
});
