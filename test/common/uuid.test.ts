// Time-ordered UUIDs (v7): the RFC 9562 layout (version 7, variant 10, the millisecond
// timestamp in the first 48 bits), ordered by time across milliseconds, unique within one.

import assert from "node:assert/strict";
import { test } from "node:test";
import { uuidv7 } from "../../src/common/uuid.ts";

const SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test("a v7 UUID carries its version, variant and millisecond timestamp", () => {
  const at = Date.UTC(2026, 10, 21, 12, 0, 0, 123);
  const id = uuidv7(at);
  assert.match(id, SHAPE);
  assert.equal(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16), at);
});

test("ids sort by their milliseconds, as text", () => {
  const ids = [5, 1, 4_000_000_000_000, 1_700_000_000_000, 2].map((ms) => uuidv7(ms));
  const byTime = [...ids].sort(
    (a, b) =>
      Number.parseInt(a.slice(0, 8) + a.slice(9, 13), 16) -
      Number.parseInt(b.slice(0, 8) + b.slice(9, 13), 16),
  );
  assert.deepEqual([...ids].sort(), byTime);
});

test("ids made in the same millisecond are unique", () => {
  const at = Date.now();
  const ids = new Set(Array.from({ length: 10_000 }, () => uuidv7(at)));
  assert.equal(ids.size, 10_000);
  for (const id of ids) assert.match(id, SHAPE);
});
