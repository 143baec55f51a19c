// The speculation gate on its own: a run's decisions go out at once while fewer than the
// depth are ahead of the landed commits; past it they wait, and go out in order as commits
// land; runs do not hold each other up; a forgotten run releases nothing.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Command } from "../../../src/workflow/engine/commands.ts";
import { SpeculationGate } from "../../../src/workflow/engine/speculation.ts";

const timer = (id: string): Command => ({ type: "StartTimer", timerId: id, fireAt: 0 });

function gate(depth: number) {
  const out: string[] = [];
  const g = new SpeculationGate<{ name: string }>((run, commands) => {
    for (const c of commands) out.push(`${run.name}:${c.type === "StartTimer" ? c.timerId : ""}`);
  }, depth);
  return { g, out };
}

describe("speculation gate", () => {
  test("within the depth, effects go out at once", () => {
    const { g, out } = gate(2);
    const a = { name: "a" };
    g.release(a, [timer("1")], 1);
    g.release(a, [timer("2")], 2);
    assert.deepEqual(out, ["a:1", "a:2"]);
  });

  test("past the depth a decision waits, then goes out when a commit lands, in order", () => {
    const { g, out } = gate(2);
    const a = { name: "a" };
    g.release(a, [timer("1")], 1);
    g.release(a, [timer("2")], 1);
    g.release(a, [timer("3")], 2);
    g.release(a, [timer("4")], 2);
    assert.deepEqual(out, ["a:1", "a:2"]);
    assert.equal(g.landed(1), true);
    assert.deepEqual(out, ["a:1", "a:2", "a:3", "a:4"]);
    assert.equal(g.landed(2), false, "nothing was left waiting");
  });

  test("a decision never overtakes one that waits", () => {
    const { g, out } = gate(1);
    const a = { name: "a" };
    g.release(a, [timer("1")], 1);
    g.release(a, [timer("2")], 2);
    g.release(a, [timer("3")], 3);
    assert.deepEqual(out, ["a:1"]);
    g.landed(1);
    assert.deepEqual(out, ["a:1", "a:2"]);
    g.landed(2);
    assert.deepEqual(out, ["a:1", "a:2", "a:3"]);
  });

  test("runs are gated each on their own lead", () => {
    const { g, out } = gate(1);
    const a = { name: "a" };
    const b = { name: "b" };
    g.release(a, [timer("1")], 1);
    g.release(a, [timer("2")], 1);
    g.release(b, [timer("1")], 1);
    assert.deepEqual(out, ["a:1", "b:1"]);
  });

  test("a forgotten run releases nothing", () => {
    const { g, out } = gate(1);
    const a = { name: "a" };
    g.release(a, [timer("1")], 1);
    g.release(a, [timer("2")], 1);
    g.forget(a);
    assert.equal(g.landed(1), false);
    assert.deepEqual(out, ["a:1"]);
  });
});
