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

// A value's stored text is pinned to the two-step encoding (walk the value for bigints and
// doubles beyond 2^53, then stringify with the replacer only when one is found) over usual
// and rare values: a tree's addresses hash these texts, so a faster encoding (one tried:
// stringify first, walk only when it throws or the text holds 16 digits in a row) must
// give exactly these.
const EXACT_MAX = 2 ** 53;
function twoStepText(value: unknown): string {
  const needsRaw = (v: unknown): boolean => {
    if (typeof v === "bigint") return true;
    if (typeof v === "number") return Math.abs(v) > EXACT_MAX && Number.isFinite(v);
    if (typeof v !== "object" || v === null) return false;
    if (Array.isArray(v)) return v.some(needsRaw);
    for (const key in v) if (needsRaw((v as Record<string, unknown>)[key])) return true;
    return false;
  };
  const raw = (_key: string, v: unknown): unknown => {
    if (typeof v === "bigint")
      return (JSON as never as { rawJSON(t: string): unknown }).rawJSON(`${v}`);
    if (typeof v === "number" && Math.abs(v) > EXACT_MAX && Number.isFinite(v)) {
      return (JSON as never as { rawJSON(t: string): unknown }).rawJSON(v.toExponential());
    }
    return v;
  };
  return needsRaw(value) ? JSON.stringify(value, raw) : JSON.stringify(value);
}

test("encodeValue writes the two-step encoding's text for usual and rare values", () => {
  const doubles = [
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 53 + 2),
    2 ** 60,
    -(2 ** 62),
    1e20,
    2 ** 69 - 2 ** 17, // below 1e21: printed in 21 digits
    1e21,
    -1e21,
    1.5e300,
    Number.MAX_VALUE,
    123456789012345,
    0.1,
    -0,
    Number.NaN,
    Number.POSITIVE_INFINITY,
  ];
  const values: unknown[] = [
    { id: 7, tag: "v", title: "Record number 7", tags: ["alpha", "beta"] },
    ...doubles,
    ...doubles.map((d) => ({ a: [1, "x", { d }], b: "12345678901234567890" })),
    2n ** 60n,
    -(2n ** 63n),
    2n ** 64n - 1n,
    { deep: [[[{ n: 12n }]]], s: "x" },
    { id: "12345678901234567890", n: 1 },
    "1234567890123456789",
    [null, true, false, "", {}],
    { when: new Date(0), skipped: undefined, f: () => 1 },
    Object.assign(Object.create({ inherited: 2n ** 60n }), { own: 2 ** 60 }),
    { toJSON: () => ({ big: 2 ** 60 }) },
  ];
  for (const value of values) {
    assert.equal(encodeValue(value), twoStepText(value), String(twoStepText(value)));
  }
  // The rare texts are the exact ones (not JSON.stringify's shortest digits).
  assert.equal(encodeValue({ d: 2 ** 60 }), '{"d":1.152921504606847e+18}');
  assert.equal(encodeValue([2n ** 60n]), "[1152921504606846976]");
});

test("encodeValue refuses integers beyond 64 bits with invalid_request, in any position", () => {
  for (const value of [2n ** 64n, { a: [-(2n ** 63n) - 1n] }, [1, { b: 2n ** 70n }]]) {
    assert.throws(() => encodeValue(value), { code: "invalid_request" });
  }
});
