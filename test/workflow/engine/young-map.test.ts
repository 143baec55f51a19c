// YoungMap renews its table every RENEW_AFTER deletes: across renewals it must answer as a
// Map does, iteration order included.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { RENEW_AFTER, YoungMap } from "../../../src/workflow/engine/young-map.ts";

describe("YoungMap", () => {
  test("answers as a Map over many renewals, in the same iteration order", () => {
    const ours = new YoungMap<string, number>();
    const reference = new Map<string, number>();
    let seed = 11;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < RENEW_AFTER * 20; i++) {
      const key = `k${next(300)}`;
      switch (next(4)) {
        case 0:
        case 1:
          ours.set(key, i);
          reference.set(key, i);
          break;
        case 2:
          assert.equal(ours.delete(key), reference.delete(key));
          break;
        case 3:
          assert.equal(ours.get(key), reference.get(key));
          assert.equal(ours.has(key), reference.has(key));
          break;
      }
      assert.equal(ours.size, reference.size);
      if (i % 97 === 0) {
        assert.deepEqual([...ours], [...reference]);
        assert.deepEqual([...ours.values()], [...reference.values()]);
        assert.deepEqual([...ours.entries()], [...reference.entries()]);
      }
    }
    assert.deepEqual([...ours], [...reference]);
    ours.clear();
    assert.equal(ours.size, 0);
    assert.deepEqual([...ours], []);
  });
});
