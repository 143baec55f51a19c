// The settled memory's bound: the latest half of its capacity is always remembered, never
// more than its capacity, and a forgotten key is reported again.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SettledMemory } from "../../../src/workflow/matching/settled.ts";

const keys = (n: number): string[] => Array.from({ length: n }, (_, i) => `run/${i}/1`);

describe("SettledMemory", () => {
  for (const capacity of [1, 2, 7, 64, 1000]) {
    test(`capacity ${capacity}: keeps the latest half, never more than the capacity`, () => {
      const memory = new SettledMemory(capacity);
      const all = keys(capacity * 5 + 3);
      for (let n = 0; n < all.length; n++) {
        memory.remember(all[n]!);
        const held = all.slice(0, n + 1).filter((k) => memory.has(k));
        assert.ok(held.length <= capacity, `${held.length} held after ${n + 1}`);
        const latest = all.slice(Math.max(0, n + 1 - Math.max(1, Math.floor(capacity / 2))), n + 1);
        for (const k of latest) assert.ok(memory.has(k), `${k} forgotten after ${n + 1}`);
      }
    });
  }

  test("a key remembered again stays; a forgotten one is not remembered", () => {
    const memory = new SettledMemory(8);
    memory.remember("a");
    memory.remember("a");
    memory.remember("b");
    assert.ok(memory.has("a"));
    memory.forget("a");
    assert.equal(memory.has("a"), false);
    assert.ok(memory.has("b"));
    // A key in the old generation is forgotten too.
    for (const k of keys(4)) memory.remember(k);
    assert.ok(memory.has("b"));
    memory.forget("b");
    assert.equal(memory.has("b"), false);
    assert.equal(memory.has("never"), false);
  });
});
