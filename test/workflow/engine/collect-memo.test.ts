// The collect memo must not change a single decision: over random runs of definitions with
// collects (flat, nested, parallel bodies, retries, timers, child runs, signal waits),
// every decision made with the memo (the state folded event by event, as the engine does)
// equals the decision a full walk makes from the replayed history. Then what the memo buys:
// a decision after one member's result walks that member, not the whole collect.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseDefinition } from "../../../src/workflow/definitions/index.ts";
import type { WorkflowDefinition } from "../../../src/workflow/definitions/types.ts";
import { CollectMemos } from "../../../src/workflow/engine/collect-memo.ts";
import { eventOf } from "../../../src/workflow/engine/commands.ts";
import {
  applyInPlace,
  type Command,
  decide,
  type HistoryEvent,
  type RunState,
  replay,
} from "../../../src/workflow/engine/index.ts";

const T0 = 1_000_000;
const def = (yaml: string) => parseDefinition(yaml, "yaml");

const DEFINITIONS: Record<string, WorkflowDefinition> = {
  flat: def(`
name: flat
task_queue: q
retry: { max_attempts: 3, initial_backoff_ms: 5 }
steps:
  - id: each
    collect:
      items: input.xs
      step: { id: one, call: { action: act, input: "{ 'n': item }" } }
output: steps.each
`),
  parallelBody: def(`
name: pbody
task_queue: q
retry: { max_attempts: 2, initial_backoff_ms: 5 }
steps:
  - { id: first, call: { action: act, input: "{ 'n': 0 }" } }
  - id: each
    collect:
      items: input.xs
      step:
        id: pair
        parallel:
          branches:
            - { id: a, call: { action: act, input: "{ 'n': item }" } }
            - { id: nap, sleep: { duration_ms: 10 } }
  - { id: last, call: { action: act, input: "{ 'all': steps.each }" } }
`),
  nested: def(`
name: nested
task_queue: q
retry: { max_attempts: 3, initial_backoff_ms: 5 }
steps:
  - id: outer
    collect:
      items: input.xs
      step:
        id: inner
        collect:
          items: "[1, 2, 3]"
          step: { id: leaf, call: { action: act, input: "{ 'n': item }" } }
`),
  children: def(`
name: kids
steps:
  - id: each
    collect:
      items: input.xs
      step: { id: kid, child: { workflow: kid, input: "{ 'n': item }" } }
`),
  waits: def(`
name: waits
task_queue: q
steps:
  - id: each
    collect:
      items: input.xs
      step:
        id: both
        parallel:
          branches:
            - { id: w, wait: { signal: go, timeout_ms: 30, on_timeout: continue } }
            - { id: c, call: { action: act, input: "{ 'n': item }" } }
`),
  // Top-level steps in sequence: a decision resumes after the finished ones (DonePrefix),
  // whose outputs later expressions read and whose waits took signals later waits must skip.
  sequence: def(`
name: sequence
task_queue: q
retry: { max_attempts: 3, initial_backoff_ms: 5 }
steps:
  - { id: a, call: { action: act, input: "{}" } }
  - { id: w1, wait: { signal: go, timeout_ms: 30, on_timeout: continue } }
  - { id: b, call: { action: act, input: "{ 'prev': steps.a, 'w': steps.w1 }" } }
  - { id: nap, sleep: { duration_ms: 10 } }
  - id: both
    parallel:
      branches:
        - { id: w2, wait: { signal: go, timeout_ms: 40, on_timeout: continue } }
        - { id: c, call: { action: act, input: "{}" } }
  - id: each
    collect:
      items: input.xs
      step: { id: one, call: { action: act, input: "{ 'n': item }" } }
  - { id: w3, wait: { signal: go, timeout_ms: 30, on_timeout: continue } }
  - { id: d, call: { action: act, input: "{ 'all': [steps.a, steps.b, steps.both, steps.w3] }" } }
output: "{ 'a': steps.a, 'd': steps.d, 'w1': steps.w1, 'n': $count(steps.each) }"
`),
};

/** A small seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Sim {
  readonly definition: WorkflowDefinition;
  readonly history: HistoryEvent[];
  state: RunState;
  readonly memos: CollectMemos;
}

/** A run of `definition` just started with `input`. */
function started(definition: WorkflowDefinition, input: unknown): Sim {
  const sim: Sim = { definition, history: [], state: replay([]), memos: new CollectMemos() };
  record(sim, {
    type: "RunStarted",
    at: T0,
    workflow_id: "wf",
    definition_version: definition.version,
    input_json: JSON.stringify(input),
  });
  return sim;
}

function record(sim: Sim, event: HistoryEvent): void {
  sim.history.push(event);
  sim.state = applyInPlace(sim.state, event);
  sim.memos.touch(sim.state, event);
}

/** Decides both ways and checks they agree; records the decision's events. */
async function step(sim: Sim, now: number, label: string): Promise<readonly Command[]> {
  const full = await decide(sim.definition, replay(sim.history), now);
  const memoed = await decide(sim.definition, sim.state, now, sim.memos);
  assert.deepEqual(memoed.commands, full.commands, `${label}: the memo changed a decision`);
  let children = 0;
  for (const command of memoed.commands) {
    const event =
      command.type === "StartChild"
        ? ({
            type: "ChildStarted",
            at: now,
            step_id: command.stepId,
            child_run_id: `child-${sim.history.length}-${children++}`,
            workflow: command.workflow,
            definition_version: `sha256:${"0".repeat(64)}`,
            input_json: command.inputJson,
          } satisfies HistoryEvent)
        : eventOf(command, now);
    if (event !== undefined) record(sim, event);
  }
  return memoed.commands;
}

/** Results for a random part of what is outstanding: activities, timers, children, signals. */
function outcomes(sim: Sim, rng: () => number, now: number): HistoryEvent[] {
  const out: HistoryEvent[] = [];
  for (const a of sim.state.activities.values()) {
    if (a.result !== undefined || rng() < 0.5) continue;
    const roll = rng();
    const ref = { at: now, activity_id: a.activityId, attempt: a.scheduled.attempt };
    if (roll < 0.75) {
      out.push({ type: "ActivityCompleted", ...ref, output_json: JSON.stringify({ r: roll }) });
    } else if (roll < 0.9) {
      out.push({
        type: "ActivityFailed",
        ...ref,
        code: "flaky",
        message: "try again",
        non_retryable: false,
      });
    } else {
      out.push({ type: "ActivityTimedOut", ...ref, timeout: "start_to_close" });
    }
  }
  for (const [timerId, t] of sim.state.timers) {
    if (!t.fired && t.fireAt <= now && rng() < 0.7) {
      out.push({ type: "TimerFired", at: now, timer_id: timerId });
    }
  }
  for (const c of sim.state.children.values()) {
    if (c.ended !== undefined || rng() < 0.5) continue;
    out.push({
      type: "ChildEnded",
      at: now,
      child_run_id: c.childRunId,
      status: rng() < 0.95 ? "Completed" : "Failed",
      output_json: JSON.stringify({ kid: c.stepId }),
      message: "",
    });
  }
  if (rng() < 0.2) {
    out.push({ type: "SignalReceived", at: now, signal: "go", payload_json: "1" });
  }
  // Shuffled: results arrive in any order.
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

async function simulate(name: string, seed: number): Promise<string> {
  const rng = random(seed);
  const definition = DEFINITIONS[name]!;
  const xs = Array.from({ length: 1 + Math.floor(rng() * 12) }, (_, i) => i);
  const sim = started(definition, { xs });
  let now = T0;
  for (let round = 0; round < 200; round++) {
    await step(sim, now, `${name} seed ${seed} round ${round}`);
    if (sim.state.ended !== undefined) return sim.state.status;
    now += 1 + Math.floor(rng() * 20);
    // Sometimes a decision runs after a single event, sometimes after a batch.
    const events = outcomes(sim, rng, now);
    const batch = rng() < 0.3 ? events.slice(0, 1) : events;
    for (const event of batch) record(sim, event);
  }
  return "unfinished";
}

describe("collect memo: the same decisions as a full walk", () => {
  for (const name of Object.keys(DEFINITIONS)) {
    test(`${name}: 40 random runs`, async () => {
      const ends = new Map<string, number>();
      for (let seed = 1; seed <= 40; seed++) {
        const status = await simulate(name, seed);
        ends.set(status, (ends.get(status) ?? 0) + 1);
      }
      // Every run ended, and the seeds cover both ends (retries running out fail some).
      assert.equal(ends.get("unfinished"), undefined, `${[...ends]}`);
      assert.ok((ends.get("Completed") ?? 0) > 0 && (ends.get("Failed") ?? 0) > 0, `${[...ends]}`);
    });
  }
});

describe("collect memo: what it saves", () => {
  test("after one member's result only that member is walked again", async () => {
    const definition = DEFINITIONS.flat!;
    const xs = Array.from({ length: 1000 }, (_, i) => i);
    const sim = started(definition, { xs });
    const first = await step(sim, T0, "first walk");
    assert.equal(first.length, 1000, "every member is scheduled on the first walk");
    const memo = sim.memos.get("each")!;
    assert.equal(memo.items.length, 1000);
    assert.equal(memo.done, 0);
    record(sim, {
      type: "ActivityCompleted",
      at: T0 + 1,
      activity_id: 500,
      attempt: 1,
      output_json: "7",
    });
    assert.deepEqual([...memo.touched], [499], "member 499 holds activity 500");
    const next = await decide(definition, sim.state, T0 + 1, sim.memos);
    assert.deepEqual(next.commands, []);
    assert.equal(memo.done, 1);
    assert.equal(memo.touched.size, 0);
    assert.equal(memo.values[499], 7);
  });

  test("a collect whose body waits for signals is never remembered", async () => {
    const definition = DEFINITIONS.waits!;
    const sim = started(definition, { xs: [1, 2] });
    await step(sim, T0, "first walk");
    assert.equal(sim.memos.get("each"), undefined);
  });

  test("a decision resumes after the top-level steps already finished", async () => {
    const sim = started(DEFINITIONS.sequence!, { xs: [1] });
    await step(sim, T0, "schedule a");
    assert.equal(sim.memos.prefix.outcomes.length, 0);
    record(sim, {
      type: "ActivityCompleted",
      at: T0 + 1,
      activity_id: 1,
      attempt: 1,
      output_json: "1",
    });
    record(sim, { type: "SignalReceived", at: T0 + 1, signal: "go", payload_json: "2" });
    const next = await step(sim, T0 + 1, "schedule b");
    assert.deepEqual(
      next.map((c) => c.type),
      ["ScheduleActivity"],
    );
    // a and w1 are done for good (w1 took the signal at history position 3): the next
    // decision starts at b, and a later wait may not take that signal again.
    assert.deepEqual(
      sim.memos.prefix.outcomes.map(([id]) => id),
      ["a", "w1"],
    );
    assert.deepEqual(sim.memos.prefix.consumed, [3]);
  });
});
