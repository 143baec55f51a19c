import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeValue, encodeValue } from "../../../src/store/codec/json-value.ts";

// decodeValue reads integer literals beyond 2^53 as bigints. It looks for them only in
// texts with 16 digits in a row, found by looking at every 16th character: these tests
// put such literals at every alignment, so a run the skipping scan misses would fail.

test("an integer beyond 2^53 is a bigint at any position in the text", () => {
  const big = 2n ** 60n + 7n;
  for (let pad = 0; pad < 40; pad++) {
    const text = `{"${"a".repeat(pad)}":${big}}`;
    const value = decodeValue(text) as Record<string, unknown>;
    assert.equal(value["a".repeat(pad)], big, `padding ${pad}`);
  }
});

test("a 16-digit integer beyond 2^53 is a bigint at any alignment, negative too", () => {
  const big = 9_007_199_254_740_993n; // 2^53 + 1: exactly 16 digits
  for (let pad = 0; pad < 40; pad++) {
    const value = decodeValue(
      `[${'"x",'.repeat(pad % 5)}"${"b".repeat(pad)}",-${big}]`,
    ) as unknown[];
    assert.equal(value[value.length - 1], -big, `padding ${pad}`);
  }
});

test("integers up to 2^53 and 15-digit runs stay numbers", () => {
  assert.deepEqual(decodeValue(`[${2 ** 53},123456789012345,1.5e300]`), [
    2 ** 53,
    123456789012345,
    1.5e300,
  ]);
  // Digits inside a string take the exact path but change nothing.
  assert.deepEqual(decodeValue(`{"id":"12345678901234567890","n":1}`), {
    id: "12345678901234567890",
    n: 1,
  });
});

test("values round-trip through their stored text", () => {
  const value = { a: [1, -(2n ** 63n), 2n ** 64n - 1n, "x".repeat(33)], b: { c: 2 ** 60 } };
  assert.deepEqual(decodeValue(encodeValue(value)), value);
});
