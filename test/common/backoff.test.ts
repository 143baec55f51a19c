// Exponential backoff as a table: initial × coefficient^(n-1), capped at max.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { backoffDelay, jitteredDelay } from "../../src/common/backoff.ts";

describe("backoffDelay", () => {
  const rows: [
    initial: number,
    max: number,
    coefficient: number | undefined,
    n: number,
    wait: number,
  ][] = [
    [500, 30_000, undefined, 1, 500],
    [500, 30_000, undefined, 2, 1_000],
    [500, 30_000, undefined, 3, 2_000],
    [500, 30_000, undefined, 7, 30_000],
    [500, 30_000, undefined, 10_000, 30_000],
    [100, 150, 2, 2, 150],
    [1_000, 60_000, 1.5, 3, 2_250],
    [1_000, 60_000, 1, 50, 1_000],
  ];
  for (const [initialMs, maxMs, coefficient, n, wait] of rows) {
    test(`initial ${initialMs}, max ${maxMs}, coefficient ${coefficient ?? 2}: wait ${n} is ${wait}`, () => {
      assert.equal(
        backoffDelay(
          { initialMs, maxMs, ...(coefficient === undefined ? {} : { coefficient }) },
          n,
        ),
        wait,
      );
    });
  }
});

describe("jitteredDelay: equal jitter, uniform in [d/2, d] of the deterministic wait d", () => {
  const policy = { initialMs: 500, maxMs: 30_000 };
  const rows: [n: number, random: number, wait: number][] = [
    [1, 0, 250],
    [1, 0.5, 375],
    [1, 0.999_999, 500],
    [3, 0, 1_000],
    [7, 0, 15_000],
    [7, 0.999_999, 30_000],
    [10_000, 0.5, 22_500],
  ];
  for (const [n, random, wait] of rows) {
    test(`retry ${n} with random ${random} waits ${wait}`, () => {
      assert.equal(
        jitteredDelay(policy, n, () => random),
        wait,
      );
    });
  }

  test("draws spread over the interval and never leave it (never above maxMs)", () => {
    for (const n of [1, 2, 5, 20]) {
      const d = backoffDelay(policy, n);
      const waits = Array.from({ length: 200 }, () => jitteredDelay(policy, n));
      for (const w of waits) assert.ok(w >= d / 2 && w <= d && w <= policy.maxMs, `${w} of ${d}`);
      assert.ok(new Set(waits).size > 50, `only ${new Set(waits).size} distinct waits of 200`);
    }
  });
});
