/**
 * Exact search over a vector table (table.ts) answers what the record-by-record oracle
 * (exact.ts) answers, to the last bit of every score: with the WebAssembly kernel
 * (scan-kernel.ts), whose float32 sums only choose candidates, and with the JavaScript
 * scan it falls back to. The vectors are made so that float32 ranks them otherwise than
 * float64 does (near-duplicates a millionth apart), with exact duplicates (ties go to the
 * smaller key), zero vectors, records of many windows across the kernel's blocks, odd row
 * counts, prefixes and k above the record count.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { exactSearch, type RecordVectors } from "../../../src/store/search/exact.ts";
import { BLOCK_ROWS, SCAN_QUESTIONS } from "../../../src/store/search/scan-kernel.ts";
import {
  exactTable,
  prefixRange,
  TableBuilder,
  type VectorTable,
  withNorms,
} from "../../../src/store/search/table.ts";
import { mulberry32 } from "../embed/test-model.ts";

function records(dims: number, count: number, seed: number): RecordVectors[] {
  const next = mulberry32(seed);
  const base = Float32Array.from({ length: dims }, () => next() - 0.5);
  const out: RecordVectors[] = [];
  for (let i = 0; i < count; i++) {
    // Every 5th record many windows (the blocks must not split them), one in 9 a zero
    // vector, one in 7 an exact duplicate of the record before, the rest the base a
    // millionth apart: float32 sums cannot tell their order, float64 sums can.
    const windows = Array.from({ length: i % 5 === 0 ? 1 + (i % 37) : 1 }, (_, w) => {
      if ((i + w) % 9 === 4) return new Float32Array(dims);
      if (i % 7 === 3 && out.length > 0) return out[out.length - 1]!.windows[0]!.slice();
      return base.map((x) => x + (next() - 0.5) * 1e-6 * (1 + (i % 3)));
    });
    out.push({ key: `k${String(i).padStart(5, "0")}`, windows });
  }
  return out;
}

function tableOf(recs: readonly RecordVectors[]): VectorTable {
  const builder = new TableBuilder(recs.length);
  for (const r of recs) builder.add(r.key, r.windows);
  return withNorms(builder.finish(1));
}

function questions(recs: readonly RecordVectors[], count: number, seed: number): Float32Array[] {
  const next = mulberry32(seed);
  const dims = recs[0]!.windows[0]!.length;
  return Array.from({ length: count }, (_, i) =>
    i % 3 === 0
      ? recs[Math.floor(next() * recs.length)]!.windows[0]!.map((x) => x + (next() - 0.5) * 1e-7)
      : Float32Array.from({ length: dims }, () => next() - 0.5),
  );
}

test("the kernel's table scan equals the oracle bit for bit", () => {
  const recs = records(384, 2 * BLOCK_ROWS + 333, 7);
  const table = tableOf(recs);
  assert.ok(table.scanner !== undefined, "384 dimensions are the kernel's");
  assert.ok(table.matrix.length / 384 > BLOCK_ROWS * 2, "several blocks");
  for (const count of [1, 3, SCAN_QUESTIONS, SCAN_QUESTIONS + 5]) {
    const qs = questions(recs, count, count);
    for (const k of [1, 10, 100]) {
      const got = exactTable(table, qs, k);
      qs.forEach((q, i) => {
        assert.deepEqual(got[i], exactSearch(q, recs, k), `${count} questions, k ${k}`);
      });
    }
  }
});

test("a prefix, k above the records and the JavaScript scan agree with the oracle", () => {
  for (const dims of [384, 6]) {
    const recs = records(dims, 600, dims);
    const table = tableOf(recs);
    assert.equal(table.scanner !== undefined, dims % 4 === 0);
    const qs = questions(recs, 5, 3);
    for (const prefix of ["k001", "k0005", "k9"]) {
      const under = recs.filter((r) => r.key.startsWith(prefix));
      const got = exactTable(table, qs, under.length + 5, prefixRange(table, prefix));
      qs.forEach((q, i) => {
        assert.deepEqual(got[i], exactSearch(q, under, under.length + 5), `${dims} ${prefix}`);
      });
    }
  }
});
