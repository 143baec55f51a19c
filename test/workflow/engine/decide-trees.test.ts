// The decision core for run trees, as tables: parallel and collect members (marked for the
// outbox, keyed per item, results in order), child runs, signal waits with timeouts, timers
// inside collect bodies, pause, the deadline given at start, and cancellation of members.
// Then the state fold's refusals for the new events.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseDefinition } from "../../../src/workflow/definitions/index.ts";
import {
  apply,
  type Command,
  decide,
  type HistoryEvent,
  replay,
} from "../../../src/workflow/engine/index.ts";

const T0 = 1_000_000;

function def(yaml: string) {
  return parseDefinition(yaml, "yaml");
}

function start(version: string, input: unknown = {}, extra: Partial<HistoryEvent> = {}) {
  return {
    type: "RunStarted",
    at: T0,
    workflow_id: "wf",
    definition_version: version,
    input_json: JSON.stringify(input),
    ...extra,
  } as HistoryEvent;
}

function sched(id: number, stepId: string, input: unknown, member = true): HistoryEvent {
  return {
    type: "ActivityScheduled",
    at: T0,
    activity_id: id,
    attempt: 1,
    step_id: stepId,
    action: "act",
    task_queue: "q",
    input_json: JSON.stringify(input),
    dispatch_at: T0,
    start_to_close_ms: 300_000,
    heartbeat_ms: 0,
    ...(member ? { member: true } : {}),
  };
}

const ok = (id: number, output: unknown): HistoryEvent => ({
  type: "ActivityCompleted",
  at: T0 + 1,
  activity_id: id,
  attempt: 1,
  output_json: JSON.stringify(output),
});

const failed = (id: number): HistoryEvent => ({
  type: "ActivityFailed",
  at: T0 + 1,
  activity_id: id,
  attempt: 1,
  code: "boom",
  message: "it broke",
  non_retryable: true,
});

const scheduleCmd = (id: number, stepId: string, input: unknown): Command => ({
  type: "ScheduleActivity",
  activityId: id,
  attempt: 1,
  stepId,
  action: "act",
  taskQueue: "q",
  inputJson: JSON.stringify(input),
  dispatchAt: T0,
  startToCloseMs: 300_000,
  heartbeatMs: 0,
  member: true,
});

const PARALLEL = def(`
name: par
task_queue: q
steps:
  - id: both
    parallel:
      branches:
        - { id: a, call: { action: act, input: "{ 'x': 1 }" } }
        - { id: b, call: { action: act, input: "{ 'x': 2 }" } }
`);

const COLLECT = def(`
name: col
task_queue: q
steps:
  - id: each
    collect:
      items: input.items
      max_items: 3
      step: { id: body, call: { action: act, input: "{ 'n': item }" } }
`);

const CHILD = def(`
name: parent
steps:
  - { id: kid, child: { workflow: kid, input: "{ 'n': input.n }" } }
`);

const WAIT = def(`
name: waits
steps:
  - { id: first, wait: { signal: go, timeout_ms: 5000 } }
  - { id: second, wait: { signal: go } }
`);

const WAIT_CONTINUE = def(`
name: waitc
steps:
  - { id: w, wait: { signal: go, timeout_ms: 5000, on_timeout: continue } }
`);

const SLEEPS = def(`
name: sleeps
steps:
  - id: each
    collect:
      items: "[1, 2]"
      step: { id: nap, sleep: { duration_ms: 50 } }
`);

type Row = [
  name: string,
  definition: ReturnType<typeof def>,
  history: HistoryEvent[],
  expected: Command[],
];

const rows: Row[] = [
  [
    "parallel: every branch is scheduled at once, as outbox members",
    PARALLEL,
    [start(PARALLEL.version)],
    [scheduleCmd(1, "a", { x: 1 }), scheduleCmd(2, "b", { x: 2 })],
  ],
  [
    "parallel: one branch done, one in flight: nothing to do",
    PARALLEL,
    [start(PARALLEL.version), sched(1, "a", { x: 1 }), sched(2, "b", { x: 2 }), ok(2, "B")],
    [],
  ],
  [
    "parallel: all branches done: the output is an object by branch id",
    PARALLEL,
    [
      start(PARALLEL.version),
      sched(1, "a", { x: 1 }),
      sched(2, "b", { x: 2 }),
      ok(2, "B"),
      ok(1, "A"),
    ],
    [{ type: "CompleteRun", outputJson: '{"a":"A","b":"B"}' }],
  ],
  [
    "parallel: a branch fails for good: the run fails and the other member is stopped",
    PARALLEL,
    [start(PARALLEL.version), sched(1, "a", { x: 1 }), sched(2, "b", { x: 2 }), failed(1)],
    [
      {
        type: "FailRun",
        code: "activity_failed",
        message: 'step "a" (activity 1) failed on attempt 1 of 3: boom: it broke',
      },
      { type: "CancelActivity", activityId: 2, attempt: 1, reason: "the run failed" },
    ],
  ],
  [
    "collect: one member per item, keyed by item index, with item bound",
    COLLECT,
    [start(COLLECT.version, { items: [10, 20, 30] })],
    [
      scheduleCmd(1, "each[0]/body", { n: 10 }),
      scheduleCmd(2, "each[1]/body", { n: 20 }),
      scheduleCmd(3, "each[2]/body", { n: 30 }),
    ],
  ],
  [
    "collect: results come back in item order whatever order members finished in",
    COLLECT,
    [
      start(COLLECT.version, { items: [10, 20] }),
      sched(1, "each[0]/body", { n: 10 }),
      sched(2, "each[1]/body", { n: 20 }),
      ok(2, 21),
      ok(1, 11),
    ],
    [{ type: "CompleteRun", outputJson: "[11,21]" }],
  ],
  [
    "collect: an empty list completes at once with []",
    COLLECT,
    [start(COLLECT.version, { items: [] })],
    [{ type: "CompleteRun", outputJson: "[]" }],
  ],
  [
    "collect: items that are not an array fail the run",
    COLLECT,
    [start(COLLECT.version, { items: 7 })],
    [
      {
        type: "FailRun",
        code: "expression_failed",
        message: "steps.each.collect.items: must yield an array, found number",
      },
    ],
  ],
  [
    "collect: more items than max_items fail the run",
    COLLECT,
    [start(COLLECT.version, { items: [1, 2, 3, 4] })],
    [
      {
        type: "FailRun",
        code: "collect_too_many_items",
        message: "steps.each.collect.items: 4 items, more than max_items (3)",
      },
    ],
  ],
  [
    "collect: a sleep body starts one timer per item",
    SLEEPS,
    [start(SLEEPS.version)],
    [
      { type: "StartTimer", timerId: "sleep:each[0]/nap", fireAt: T0 + 50 },
      { type: "StartTimer", timerId: "sleep:each[1]/nap", fireAt: T0 + 50 },
    ],
  ],
  [
    "child: the child run is started with its evaluated input",
    CHILD,
    [start(CHILD.version, { n: 4 })],
    [
      {
        type: "StartChild",
        stepId: "kid",
        workflow: "kid",
        version: undefined,
        inputJson: '{"n":4}',
      },
    ],
  ],
  [
    "child: started and not ended: the parent waits",
    CHILD,
    [start(CHILD.version, { n: 4 }), childStarted("kid", "c1")],
    [],
  ],
  [
    "child: completed: its output is the step's output",
    CHILD,
    [start(CHILD.version), childStarted("kid", "c1"), childEnded("c1", "Completed", '{"r":1}')],
    [{ type: "CompleteRun", outputJson: '{"r":1}' }],
  ],
  [
    "child: failed: the parent fails with child_failed",
    CHILD,
    [start(CHILD.version), childStarted("kid", "c1"), childEnded("c1", "Failed", "null", "x: y")],
    [{ type: "FailRun", code: "child_failed", message: 'step "kid": child run c1 failed: x: y' }],
  ],
  [
    "child: cancelled: the parent fails with child_cancelled",
    CHILD,
    [
      start(CHILD.version),
      childStarted("kid", "c1"),
      childEnded("c1", "Cancelled", "null", "requested"),
    ],
    [
      {
        type: "FailRun",
        code: "child_cancelled",
        message: 'step "kid": child run c1 cancelled: requested',
      },
    ],
  ],
  [
    "wait: no signal yet: its timeout timer starts",
    WAIT,
    [start(WAIT.version)],
    [{ type: "StartTimer", timerId: "wait:first", fireAt: T0 + 5000 }],
  ],
  [
    "wait: a signal received before the wait is taken by it; the next wait waits for another",
    WAIT,
    [start(WAIT.version), signal("go", '{"ok":1}'), timerStarted("wait:first", T0 + 5000)],
    [],
  ],
  [
    "wait: each wait takes its own signal, in order",
    WAIT,
    [
      start(WAIT.version),
      signal("go", "1"),
      signal("other", "9"),
      timerStarted("wait:first", T0 + 5000),
      signal("go", "2"),
    ],
    [{ type: "CompleteRun", outputJson: "2" }],
  ],
  [
    "wait: the timeout fired first: the run fails (on_timeout fail)",
    WAIT,
    [start(WAIT.version), timerStarted("wait:first", T0 + 5000), fired("wait:first")],
    [
      {
        type: "FailRun",
        code: "wait_timed_out",
        message: 'step "first" waited 5000 ms for signal "go"',
      },
    ],
  ],
  [
    "wait: a signal after the timeout does not count; on_timeout continue yields null",
    WAIT_CONTINUE,
    [
      start(WAIT_CONTINUE.version),
      timerStarted("wait:w", T0 + 5000),
      fired("wait:w"),
      signal("go", "1"),
    ],
    [{ type: "CompleteRun", outputJson: "null" }],
  ],
  [
    "pause: a Paused run schedules nothing new",
    PARALLEL,
    [start(PARALLEL.version), { type: "RunPaused", at: T0 }],
    [],
  ],
  [
    "pause: resumed, it schedules what it held back",
    PARALLEL,
    [start(PARALLEL.version), { type: "RunPaused", at: T0 }, { type: "RunResumed", at: T0 }],
    [scheduleCmd(1, "a", { x: 1 }), scheduleCmd(2, "b", { x: 2 })],
  ],
  [
    "deadline given at start: its timer starts with the run",
    CHILD,
    [start(CHILD.version, {}, { deadline_ms: 700 })],
    [
      { type: "StartTimer", timerId: "deadline", fireAt: T0 + 700 },
      {
        type: "StartChild",
        stepId: "kid",
        workflow: "kid",
        version: undefined,
        inputJson: "{}",
      },
    ],
  ],
  [
    "deadline fired while Paused: the run is cancelled (reason deadline)",
    CHILD,
    [
      start(CHILD.version, {}, { deadline_ms: 700 }),
      timerStarted("deadline", T0 + 700),
      { type: "RunPaused", at: T0 },
      fired("deadline"),
    ],
    [{ type: "CancelRun", reason: "deadline" }],
  ],
  [
    "cancelled: every member in flight gets a cancel",
    PARALLEL,
    [
      start(PARALLEL.version),
      sched(1, "a", { x: 1 }),
      sched(2, "b", { x: 2 }),
      { type: "RunCancelled", at: T0, reason: "requested" },
    ],
    [
      { type: "CancelActivity", activityId: 1, attempt: 1, reason: "the run was cancelled" },
      { type: "CancelActivity", activityId: 2, attempt: 1, reason: "the run was cancelled" },
    ],
  ],
];

function childStarted(stepId: string, childRunId: string): HistoryEvent {
  return {
    type: "ChildStarted",
    at: T0,
    step_id: stepId,
    child_run_id: childRunId,
    workflow: "kid",
    definition_version: `sha256:${"0".repeat(64)}`,
    input_json: "{}",
  };
}

function childEnded(
  childRunId: string,
  status: "Completed" | "Failed" | "Cancelled",
  output: string,
  message = "",
): HistoryEvent {
  return {
    type: "ChildEnded",
    at: T0,
    child_run_id: childRunId,
    status,
    output_json: output,
    message,
  };
}

function signal(name: string, payload: string): HistoryEvent {
  return { type: "SignalReceived", at: T0, signal: name, payload_json: payload };
}

function timerStarted(id: string, fireAt: number): HistoryEvent {
  return { type: "TimerStarted", at: T0, timer_id: id, fire_at: fireAt };
}

function fired(id: string): HistoryEvent {
  return { type: "TimerFired", at: T0 + 5000, timer_id: id };
}

describe("decide: run-tree steps", () => {
  for (const [name, definition, history, expected] of rows) {
    test(name, async () => {
      assert.deepEqual((await decide(definition, replay(history), T0)).commands, expected);
    });
  }

  test("a member's retry keeps the member's instance key as its step id", async () => {
    const history = [
      start(COLLECT.version, { items: [10, 20] }),
      sched(1, "each[0]/body", { n: 10 }),
      sched(2, "each[1]/body", { n: 20 }),
      { ...failed(2), non_retryable: false },
    ];
    const { commands } = await decide(COLLECT, replay(history), T0 + 1);
    assert.equal(commands.length, 1);
    const retry = commands[0]!;
    assert.ok(retry.type === "ScheduleActivity");
    assert.deepEqual(
      [retry.activityId, retry.attempt, retry.stepId, retry.inputJson, retry.member],
      [2, 2, "each[1]/body", '{"n":20}', true],
    );
  });

  test("replaying every prefix of a parallel run never schedules a finished member again", async () => {
    const history = [
      start(PARALLEL.version),
      sched(1, "a", { x: 1 }),
      sched(2, "b", { x: 2 }),
      ok(1, "A"),
    ];
    const { commands } = await decide(PARALLEL, replay(history), T0);
    assert.deepEqual(commands, []);
  });
});

describe("state fold: run-tree events", () => {
  const base = [start(PARALLEL.version)];
  const refusals: [string, HistoryEvent[], HistoryEvent][] = [
    ["RunResumed on a Running run", base, { type: "RunResumed", at: T0 }],
    [
      "RunPaused on a Paused run",
      [...base, { type: "RunPaused", at: T0 }],
      { type: "RunPaused", at: T0 },
    ],
    ["ChildEnded for an unknown child", base, childEnded("nope", "Completed", "1")],
    [
      "ChildEnded twice",
      [...base, childStarted("kid", "c1"), childEnded("c1", "Completed", "1")],
      childEnded("c1", "Completed", "1"),
    ],
    [
      "a second ChildStarted for one step",
      [...base, childStarted("kid", "c1")],
      childStarted("kid", "c2"),
    ],
  ];
  for (const [name, history, event] of refusals) {
    test(`refuses ${name} (history_corrupt)`, () => {
      assert.throws(() => apply(replay(history), event), { code: "history_corrupt" });
    });
  }

  test("Paused still records results of work in flight; Cancelled from Paused", () => {
    let state = replay([...base, sched(1, "a", {}), { type: "RunPaused", at: T0 }]);
    assert.equal(state.status, "Paused");
    state = apply(state, ok(1, 1));
    state = apply(state, { type: "RunCancelled", at: T0, reason: "requested" });
    assert.equal(state.status, "Cancelled");
  });
});
