// Exponential backoff as a table: initial × coefficient^(n-1), capped at max.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { backoffDelay } from "../../src/common/backoff.ts";

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
