// The engine's timer heap: due order, replacement by key, deletion, and rebuilding after
// many stale entries. Uses a settable clock and real (short) OS timers.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { TimerQueue } from "../../../src/workflow/engine/timers.ts";
import { until } from "../../support/until.ts";

function queue() {
  let now = 1_000;
  const fired: string[] = [];
  const q = new TimerQueue<string>(
    (key, payload) => fired.push(`${key}=${payload}`),
    () => now,
  );
  return {
    q,
    fired,
    /** Moves the clock on, then waits for `count` fires (the OS timer is late under load). */
    advance: async (ms: number, count = fired.length) => {
      now += ms;
      await until(`${count} fires`, () => fired.length >= count);
      // A short window for a fire that should not happen: the tests check that none did.
      await new Promise((r) => setTimeout(r, 5));
    },
  };
}

describe("TimerQueue", () => {
  test("fires due entries in time order, not before", async () => {
    const { q, fired, advance } = queue();
    q.set("c", 1_030, "3");
    q.set("a", 1_010, "1");
    q.set("b", 1_020, "2");
    await advance(0);
    assert.deepEqual(fired, []);
    await advance(25, 2);
    assert.deepEqual(fired, ["a=1", "b=2"]);
    await advance(10, 3);
    assert.deepEqual(fired, ["a=1", "b=2", "c=3"]);
    assert.equal(q.size, 0);
    q.close();
  });

  test("setting a key again replaces it; deleting a key stops it", async () => {
    const { q, fired, advance } = queue();
    q.set("a", 1_010, "old");
    q.set("a", 1_050, "new");
    q.set("b", 1_010, "gone");
    q.delete("b");
    await advance(20);
    assert.deepEqual(fired, []);
    await advance(40, 1);
    assert.deepEqual(fired, ["a=new"]);
    q.close();
  });

  test("many replaced entries are compacted and the live ones still fire", async () => {
    const { q, fired, advance } = queue();
    for (let i = 0; i < 5_000; i++) q.set("hb", 2_000 + i, String(i));
    q.set("x", 1_001, "x");
    assert.equal(q.size, 2);
    await advance(10_000, 2);
    assert.deepEqual(fired, ["x=x", "hb=4999"]);
    q.close();
  });

  test("a key in one space is apart from the same key in another", async () => {
    const { q, fired, advance } = queue();
    q.set("k", 1_010, "s0");
    q.set("k", 1_020, "s2", 2);
    q.set("k", 1_030, "s3", 3);
    assert.equal(q.size, 3);
    assert.ok(q.has("k", 2) && !q.has("k", 1));
    q.delete("k", 3);
    q.set("k", 1_015, "s2 again", 2);
    assert.equal(q.size, 2);
    await advance(40, 2);
    assert.deepEqual(fired, ["k=s0", "k=s2 again"]);
    assert.equal(q.size, 0);
    q.close();
  });

  test("close stops everything", async () => {
    const { q, fired, advance } = queue();
    q.set("a", 1_001, "1");
    q.close();
    await advance(10);
    assert.deepEqual(fired, []);
  });
});
