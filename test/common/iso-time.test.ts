import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isoTime } from "../../src/common/iso-time.ts";

describe("isoTime is Date's toISOString", () => {
  test("around day boundaries, before 1970, extended years and fractions", () => {
    const DAY = 86_400_000;
    const times = [0, -1, 1, DAY - 1, DAY, -DAY, -DAY - 1, 1_780_000_000_123, 8.64e15, -8.64e15];
    for (const t of [...times]) times.push(t + 999, t - 999, t + 59_999, t + 3_599_999);
    times.push(1.5, -0.5, 1_780_000_000_123.7);
    for (const t of times) {
      if (Math.abs(t) > 8.64e15) continue;
      assert.equal(isoTime(t), new Date(t).toISOString(), `${t}`);
    }
  });

  test("random times, in and out of the day last written", () => {
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    let t = 1_780_000_000_000;
    for (let i = 0; i < 20_000; i++) {
      t = next() < 0.1 ? Math.floor((next() - 0.5) * 2 * 8.64e15) : t + Math.floor(next() * 5e6);
      assert.equal(isoTime(t), new Date(t).toISOString(), `${t}`);
    }
  });

  test("a time Date cannot write throws as toISOString does", () => {
    assert.equal(isoTime(8.64e15), new Date(8.64e15).toISOString());
    assert.throws(() => isoTime(8.64e15 + 1), RangeError, "the day last written is the last");
    assert.throws(() => isoTime(Number.NaN), RangeError);
    assert.throws(() => isoTime(8.64e15 + 1), RangeError);
  });
});
