// The table of callers waiting for runs to end (describe's `wait_ms`): an end answers every
// caller of that run and no other, a wait runs out on its own, the table is bounded (a
// caller past the bound is answered at once), and closing answers everyone. A caller learns
// the run's state at its end when it saw the end, and nothing otherwise.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { EMPTY_RUN, type RunState } from "../../../src/workflow/engine/state.ts";
import { RunEnds } from "../../../src/workflow/runs/ends.ts";

/** Whether the promise has settled after the current turns. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe("run ends", () => {
  test("an end answers every caller of that run, and only them", async () => {
    const ends = new RunEnds(10);
    const a1 = ends.wait("a", 60_000);
    const a2 = ends.wait("a", 60_000);
    const b = ends.wait("b", 60_000);
    assert.equal(ends.waiting, 3);
    ends.ended("a");
    assert.equal(await settled(a1), true);
    assert.equal(await settled(a2), true);
    assert.equal(await settled(b), false);
    assert.equal(ends.waiting, 1);
    ends.ended("b");
    assert.equal(await settled(b), true);
    assert.equal(ends.waiting, 0);
  });

  test("a caller that saw the end gets the state it was reported with; others get nothing", async (t) => {
    const end: RunState = { ...EMPTY_RUN, status: "Completed" };
    const ends = new RunEnds(1);
    const seen = ends.wait("a", 60_000);
    const full = ends.wait("b", 60_000);
    ends.ended("a", end);
    assert.equal(await seen, end);
    assert.equal(await full, undefined);
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const late = ends.wait("c", 30);
    t.mock.timers.tick(30);
    assert.equal(await late, undefined);
    const closing = ends.wait("d", 60_000);
    ends.close();
    assert.equal(await closing, undefined);
  });

  test("a wait runs out on its own and leaves the table", async (t) => {
    // The clock is the test's, so no pause of a loaded machine can run the wait out early
    // (CI flaked at load 15 with a real 30 ms timer).
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const ends = new RunEnds(10);
    const w = ends.wait("a", 30);
    t.mock.timers.tick(29);
    assert.equal(await settled(w), false);
    assert.equal(ends.waiting, 1);
    t.mock.timers.tick(1);
    assert.equal(await settled(w), true);
    assert.equal(ends.waiting, 0);
    ends.ended("a"); // nothing left to answer
  });

  test("past the bound a caller is answered at once, and not counted", async () => {
    const ends = new RunEnds(2);
    const held = [ends.wait("a", 60_000), ends.wait("b", 60_000)];
    const third = ends.wait("c", 60_000);
    assert.equal(await settled(third), true);
    assert.equal(ends.waiting, 2);
    ends.close();
    for (const w of held) assert.equal(await settled(w), true);
    assert.equal(ends.waiting, 0);
  });

  test("a table of size 0 never holds a caller", async () => {
    const ends = new RunEnds(0);
    assert.equal(await settled(ends.wait("a", 60_000)), true);
  });
});
