// The decision core as tables: a definition, a history and a time in; the commands out.
// Then the property the server relies on for kill -9 safety: replaying any prefix of a
// run's history gives the same next commands as the run had, and no completed activity is
// ever scheduled again.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decode } from "../../../src/common/decode/index.ts";
import {
  parseDefinition,
  type WorkflowDefinition,
} from "../../../src/workflow/definitions/index.ts";
import {
  acceptsResult,
  type Command,
  decide,
  eventOf,
  type HistoryEvent,
  historyEvent,
  inFlight,
  pendingTimers,
  replay,
} from "../../../src/workflow/engine/index.ts";

const DEF = parseDefinition(
  `
name: order
task_queue: shop
retry: { max_attempts: 3, initial_backoff_ms: 100, max_backoff_ms: 150, non_retryable_codes: [card_declined] }
start_to_close_ms: 5000
steps:
  - id: reserve
    call: { action: reserve, input: "{ 'sku': input.sku }" }
  - id: charge
    call: { action: charge, input: "{ 'amount': steps.reserve.price * input.qty }", heartbeat_ms: 1000 }
output: "{ 'receipt': steps.charge.id, 'price': steps.reserve.price }"
`,
  "yaml",
);

const T0 = 1_000_000;
const started: HistoryEvent = {
  type: "RunStarted",
  at: T0,
  workflow_id: "wf-1",
  definition_version: DEF.version,
  input_json: '{"sku":"X1","qty":3}',
};

function scheduled(
  activityId: number,
  attempt: number,
  stepId: string,
  inputJson: string,
  at: number,
  dispatchAt = at,
) {
  const step = DEF.steps.find((s) => s.id === stepId)!;
  assert.ok(step.kind === "call");
  return {
    type: "ActivityScheduled",
    at,
    activity_id: activityId,
    attempt,
    step_id: stepId,
    action: step.action,
    task_queue: step.taskQueue,
    input_json: inputJson,
    dispatch_at: dispatchAt,
    start_to_close_ms: step.startToCloseMs,
    heartbeat_ms: step.heartbeatMs,
  } as const satisfies HistoryEvent;
}
const done = (activityId: number, attempt: number, output: string, at: number): HistoryEvent => ({
  type: "ActivityCompleted",
  at,
  activity_id: activityId,
  attempt,
  output_json: output,
});
const failed = (
  activityId: number,
  attempt: number,
  code: string,
  at: number,
  nonRetryable = false,
): HistoryEvent => ({
  type: "ActivityFailed",
  at,
  activity_id: activityId,
  attempt,
  code,
  message: "it broke",
  non_retryable: nonRetryable,
});

const RESERVE_1 = scheduled(1, 1, "reserve", '{"sku":"X1"}', T0);
const RESERVED = done(1, 1, '{"price":2.5}', T0 + 10);
const CHARGE_1 = scheduled(2, 1, "charge", '{"amount":7.5}', T0 + 10);

function command(c: Partial<Command> & { type: Command["type"] }): Command {
  return c as Command;
}

describe("decide", () => {
  const rows: [name: string, history: HistoryEvent[], now: number, expected: Command[]][] = [
    ["an empty history decides nothing", [], T0, []],
    [
      "a started run schedules its first activity with the evaluated input",
      [started],
      T0,
      [
        command({
          type: "ScheduleActivity",
          activityId: 1,
          attempt: 1,
          stepId: "reserve",
          action: "reserve",
          taskQueue: "shop",
          inputJson: '{"sku":"X1"}',
          dispatchAt: T0,
          startToCloseMs: 5000,
          heartbeatMs: 0,
        }),
      ],
    ],
    ["an attempt in flight: wait", [started, RESERVE_1], T0 + 5, []],
    [
      "a completed step feeds the next step's input",
      [started, RESERVE_1, RESERVED],
      T0 + 10,
      [
        command({
          type: "ScheduleActivity",
          activityId: 2,
          attempt: 1,
          stepId: "charge",
          action: "charge",
          taskQueue: "shop",
          inputJson: '{"amount":7.5}',
          dispatchAt: T0 + 10,
          startToCloseMs: 5000,
          heartbeatMs: 1000,
        }),
      ],
    ],
    [
      "the last step completed: the run completes with its output expression",
      [started, RESERVE_1, RESERVED, CHARGE_1, done(2, 1, '{"id":"r-9"}', T0 + 20)],
      T0 + 20,
      [command({ type: "CompleteRun", outputJson: '{"receipt":"r-9","price":2.5}' })],
    ],
    [
      "a retryable failure schedules the next attempt after the initial backoff, same input",
      [started, RESERVE_1, failed(1, 1, "flaky", T0 + 5)],
      T0 + 6,
      [
        command({
          type: "ScheduleActivity",
          activityId: 1,
          attempt: 2,
          stepId: "reserve",
          action: "reserve",
          taskQueue: "shop",
          inputJson: '{"sku":"X1"}',
          dispatchAt: T0 + 5 + 100,
          startToCloseMs: 5000,
          heartbeatMs: 0,
        }),
      ],
    ],
    [
      "the backoff grows and is capped at max_backoff_ms",
      [
        started,
        RESERVE_1,
        failed(1, 1, "flaky", T0 + 5),
        scheduled(1, 2, "reserve", '{"sku":"X1"}', T0 + 6, T0 + 105),
        {
          type: "ActivityTimedOut",
          at: T0 + 200,
          activity_id: 1,
          attempt: 2,
          timeout: "heartbeat",
        },
      ],
      T0 + 200,
      [
        command({
          type: "ScheduleActivity",
          activityId: 1,
          attempt: 3,
          stepId: "reserve",
          action: "reserve",
          taskQueue: "shop",
          inputJson: '{"sku":"X1"}',
          dispatchAt: T0 + 200 + 150,
          startToCloseMs: 5000,
          heartbeatMs: 0,
        }),
      ],
    ],
    [
      "the last attempt failing fails the run",
      [
        started,
        RESERVE_1,
        failed(1, 1, "flaky", T0 + 5),
        scheduled(1, 2, "reserve", '{"sku":"X1"}', T0 + 6, T0 + 105),
        failed(1, 2, "flaky", T0 + 110),
        scheduled(1, 3, "reserve", '{"sku":"X1"}', T0 + 111, T0 + 260),
        {
          type: "ActivityTimedOut",
          at: T0 + 5300,
          activity_id: 1,
          attempt: 3,
          timeout: "start_to_close",
        },
      ],
      T0 + 5300,
      [
        command({
          type: "FailRun",
          code: "activity_failed",
          message: 'step "reserve" (activity 1) failed on attempt 3 of 3: start_to_close_timeout',
        }),
      ],
    ],
    [
      "an attempt lost with its worker is retried",
      [
        started,
        RESERVE_1,
        {
          type: "ActivityTimedOut",
          at: T0 + 50,
          activity_id: 1,
          attempt: 1,
          timeout: "worker_lost",
        },
      ],
      T0 + 50,
      [
        command({
          type: "ScheduleActivity",
          activityId: 1,
          attempt: 2,
          stepId: "reserve",
          action: "reserve",
          taskQueue: "shop",
          inputJson: '{"sku":"X1"}',
          dispatchAt: T0 + 50 + 100,
          startToCloseMs: 5000,
          heartbeatMs: 0,
        }),
      ],
    ],
    [
      "an attempt ended by a takeover is followed at once by the next, even past max_attempts",
      [
        started,
        RESERVE_1,
        failed(1, 1, "flaky", T0 + 5),
        scheduled(1, 2, "reserve", '{"sku":"X1"}', T0 + 6, T0 + 105),
        failed(1, 2, "flaky", T0 + 110),
        scheduled(1, 3, "reserve", '{"sku":"X1"}', T0 + 111, T0 + 260),
        {
          type: "ActivityTimedOut",
          at: T0 + 300,
          activity_id: 1,
          attempt: 3,
          timeout: "owner_lost",
        },
      ],
      T0 + 300,
      [
        command({
          type: "ScheduleActivity",
          activityId: 1,
          attempt: 4,
          stepId: "reserve",
          action: "reserve",
          taskQueue: "shop",
          inputJson: '{"sku":"X1"}',
          dispatchAt: T0 + 300,
          startToCloseMs: 5000,
          heartbeatMs: 0,
        }),
      ],
    ],
    [
      "attempts ended by a takeover do not count against max_attempts or the backoff",
      [
        started,
        RESERVE_1,
        { type: "ActivityTimedOut", at: T0 + 5, activity_id: 1, attempt: 1, timeout: "owner_lost" },
        scheduled(1, 2, "reserve", '{"sku":"X1"}', T0 + 5),
        failed(1, 2, "flaky", T0 + 10),
        scheduled(1, 3, "reserve", '{"sku":"X1"}', T0 + 11, T0 + 110),
        failed(1, 3, "flaky", T0 + 120),
      ],
      T0 + 120,
      [
        command({
          type: "ScheduleActivity",
          activityId: 1,
          attempt: 4,
          stepId: "reserve",
          action: "reserve",
          taskQueue: "shop",
          inputJson: '{"sku":"X1"}',
          // The second counted failure: the second backoff (capped at 150).
          dispatchAt: T0 + 120 + 150,
          startToCloseMs: 5000,
          heartbeatMs: 0,
        }),
      ],
    ],
    [
      "a failure the worker marked non-retryable fails the run at once",
      [started, RESERVE_1, failed(1, 1, "bad_input", T0 + 5, true)],
      T0 + 5,
      [
        command({
          type: "FailRun",
          code: "activity_failed",
          message: 'step "reserve" (activity 1) failed on attempt 1 of 3: bad_input: it broke',
        }),
      ],
    ],
    [
      "a failure code listed in non_retryable_codes fails the run at once",
      [started, RESERVE_1, failed(1, 1, "card_declined", T0 + 5)],
      T0 + 5,
      [
        command({
          type: "FailRun",
          code: "activity_failed",
          message: 'step "reserve" (activity 1) failed on attempt 1 of 3: card_declined: it broke',
        }),
      ],
    ],
    [
      "a completed run decides nothing",
      [started, { type: "RunCompleted", at: T0, output_json: "null" }],
      T0,
      [],
    ],
    [
      "a cancelled run stops its in-flight attempts",
      [started, RESERVE_1, { type: "RunCancelled", at: T0 + 1, reason: "requested" }],
      T0 + 1,
      [
        command({
          type: "CancelActivity",
          activityId: 1,
          attempt: 1,
          reason: "the run was cancelled",
        }),
      ],
    ],
  ];
  for (const [name, history, now, expected] of rows) {
    test(name, async () => {
      assert.deepEqual((await decide(DEF, replay(history), now)).commands, expected);
    });
  }

  describe("sleep steps and the run deadline", () => {
    const def = parseDefinition(
      "name: napper\ntask_queue: q\ndeadline_ms: 60000\nsteps:\n  - {id: nap, sleep: {duration_ms: 500}}\n  - {id: work, call: {action: w}}\n",
      "yaml",
    );
    const start: HistoryEvent = { ...started, definition_version: def.version } as HistoryEvent;
    const rows: [name: string, history: HistoryEvent[], now: number, expected: Command[]][] = [
      [
        "the first decision starts the deadline timer and the sleep timer",
        [start],
        T0 + 3,
        [
          command({ type: "StartTimer", timerId: "deadline", fireAt: T0 + 60_000 }),
          command({ type: "StartTimer", timerId: "sleep:nap", fireAt: T0 + 3 + 500 }),
        ],
      ],
      [
        "a pending sleep: wait",
        [
          start,
          { type: "TimerStarted", at: T0, timer_id: "deadline", fire_at: T0 + 60_000 },
          { type: "TimerStarted", at: T0, timer_id: "sleep:nap", fire_at: T0 + 500 },
        ],
        T0 + 100,
        [],
      ],
      [
        "a fired sleep moves on",
        [
          start,
          { type: "TimerStarted", at: T0, timer_id: "deadline", fire_at: T0 + 60_000 },
          { type: "TimerStarted", at: T0, timer_id: "sleep:nap", fire_at: T0 + 500 },
          { type: "TimerFired", at: T0 + 500, timer_id: "sleep:nap" },
        ],
        T0 + 500,
        [
          command({
            type: "ScheduleActivity",
            activityId: 1,
            attempt: 1,
            stepId: "work",
            action: "w",
            taskQueue: "q",
            inputJson: '{"sku":"X1","qty":3}',
            dispatchAt: T0 + 500,
            startToCloseMs: 300_000,
            heartbeatMs: 0,
          }),
        ],
      ],
      [
        "the deadline fires: the run is cancelled and its attempt told to stop",
        [
          start,
          { type: "TimerStarted", at: T0, timer_id: "deadline", fire_at: T0 + 60_000 },
          { type: "TimerStarted", at: T0, timer_id: "sleep:nap", fire_at: T0 + 500 },
          { type: "TimerFired", at: T0 + 500, timer_id: "sleep:nap" },
          {
            type: "ActivityScheduled",
            at: T0 + 500,
            activity_id: 1,
            attempt: 1,
            step_id: "work",
            action: "w",
            task_queue: "q",
            input_json: "{}",
            dispatch_at: T0 + 500,
            start_to_close_ms: 300_000,
            heartbeat_ms: 0,
          },
          { type: "TimerFired", at: T0 + 60_000, timer_id: "deadline" },
        ],
        T0 + 60_000,
        [
          command({ type: "CancelRun", reason: "deadline" }),
          command({
            type: "CancelActivity",
            activityId: 1,
            attempt: 1,
            reason: "the run's deadline passed",
          }),
        ],
      ],
    ];
    for (const [name, history, now, expected] of rows) {
      test(name, async () => {
        assert.deepEqual((await decide(def, replay(history), now)).commands, expected);
      });
    }
  });

  test("an input expression that fails fails the run with expression_failed", async () => {
    const def = parseDefinition(
      "name: w\ntask_queue: q\nsteps: [{id: a, call: {action: x, input: \"$number('x')\"}}]",
      "yaml",
    );
    const { commands } = await decide(
      def,
      replay([{ ...started, definition_version: def.version } as HistoryEvent]),
      T0,
    );
    assert.equal(commands.length, 1);
    assert.equal(commands[0]!.type, "FailRun");
    assert.ok(commands[0]!.type === "FailRun" && commands[0]!.code === "expression_failed");
    assert.match(
      commands[0]!.message,
      /^steps\.a\.call\.input: expression "\$number\('x'\)" failed/,
    );
  });

  test("constant inputs are scheduled as evaluation would write them; outputs are read when used", async () => {
    // Constants skip the evaluator (and the run's input is never parsed for them); a later
    // expression still sees every earlier output, and the run's output is the last one.
    const def = parseDefinition(
      `name: consts
task_queue: q
steps:
  - { id: a, call: { action: x, input: '{ "n" : 1.50, "s": [ ] }' } }
  - { id: b, call: { action: x, input: "7" } }
  - { id: c, call: { action: x, input: "{ 'sum': steps.a.v + steps.b.v }" } }
  - { id: d, call: { action: x, input: "null" } }
`,
      "yaml",
    );
    const begun: HistoryEvent = { ...started, definition_version: def.version };
    const step = (id: number, stepId: string, input: string): HistoryEvent => ({
      type: "ActivityScheduled",
      at: T0,
      activity_id: id,
      attempt: 1,
      step_id: stepId,
      action: "x",
      task_queue: "q",
      input_json: input,
      dispatch_at: T0,
      start_to_close_ms: (def.steps[0] as { startToCloseMs: number }).startToCloseMs,
      heartbeat_ms: 0,
    });
    const first = await decide(def, replay([begun]), T0);
    assert.deepEqual(
      first.commands.map((c) => c.type === "ScheduleActivity" && c.inputJson),
      ['{"n":1.5,"s":[]}'],
    );
    const history = [
      begun,
      step(1, "a", '{"n":1.5,"s":[]}'),
      done(1, 1, '{"v":2}', T0),
      step(2, "b", "7"),
      done(2, 1, '{"v":40}', T0),
    ];
    const third = await decide(def, replay(history), T0);
    assert.deepEqual(
      third.commands.map((c) => c.type === "ScheduleActivity" && c.inputJson),
      ['{"sum":42}'],
    );
    history.push(step(3, "c", '{"sum":42}'), done(3, 1, "1", T0));
    const fourth = await decide(def, replay(history), T0);
    assert.deepEqual(
      fourth.commands.map((c) => c.type === "ScheduleActivity" && c.inputJson),
      ["null"],
    );
    history.push(step(4, "d", "null"), done(4, 1, '{"last":[1,2]}', T0));
    assert.deepEqual((await decide(def, replay(history), T0)).commands, [
      { type: "CompleteRun", outputJson: '{"last":[1,2]}' },
    ]);
  });

  test("a definition other than the pinned version is refused", async () => {
    const other = parseDefinition(
      "name: other\ntask_queue: q\nsteps: [{id: a, call: {action: x}}]",
      "yaml",
    );
    await assert.rejects(decide(other, replay([started]), T0), { code: "definition_mismatch" });
  });
});

describe("run state", () => {
  const corrupt: [name: string, history: HistoryEvent[]][] = [
    ["an event before RunStarted", [RESERVE_1]],
    ["a second RunStarted", [started, started]],
    ["a result for an activity never scheduled", [started, done(1, 1, "{}", T0)]],
    ["a result for another attempt", [started, RESERVE_1, done(1, 2, "{}", T0)]],
    ["two results for one attempt", [started, RESERVE_1, RESERVED, done(1, 1, "{}", T0)]],
    ["an activity id out of position", [started, scheduled(2, 1, "reserve", "{}", T0)]],
    [
      "a retry of a completed activity",
      [started, RESERVE_1, RESERVED, scheduled(1, 2, "reserve", "{}", T0)],
    ],
    [
      "an event after the run ended",
      [started, { type: "RunFailed", at: T0, code: "x", message: "y" }, RESERVE_1],
    ],
  ];
  for (const [name, history] of corrupt) {
    test(`refused as history_corrupt: ${name}`, () => {
      assert.throws(() => replay(history), { code: "history_corrupt" });
    });
  }

  test("acceptsResult: only the current attempt, once, in a running run", () => {
    const state = replay([started, RESERVE_1]);
    assert.equal(acceptsResult(state, 1, 1), true);
    assert.equal(acceptsResult(state, 1, 2), false, "not the current attempt");
    assert.equal(acceptsResult(state, 2, 1), false, "no such activity");
    assert.equal(
      acceptsResult(replay([started, RESERVE_1, RESERVED]), 1, 1),
      false,
      "already has a result",
    );
    const cancelled = replay([
      started,
      RESERVE_1,
      { type: "RunCancelled", at: T0, reason: "requested" },
    ]);
    assert.equal(acceptsResult(cancelled, 1, 1), false, "the run ended");
  });

  test("inFlight and pendingTimers list what a restarted server re-arms", () => {
    const state = replay([
      started,
      RESERVE_1,
      { type: "TimerStarted", at: T0, timer_id: "t", fire_at: T0 + 9 },
    ]);
    assert.deepEqual(inFlight(state), [RESERVE_1]);
    assert.deepEqual(pendingTimers(state), [{ timerId: "t", fireAt: T0 + 9 }]);
  });

  test("stored events decode back with the history decoder", () => {
    for (const event of [started, RESERVE_1, RESERVED, failed(1, 1, "x", T0)]) {
      const r = decode(historyEvent, JSON.parse(JSON.stringify(event)));
      assert.deepEqual(r, { ok: true, value: event });
    }
    const bad = decode(historyEvent, {
      type: "ActivityCompleted",
      at: T0,
      activity_id: 0,
      attempt: 1,
      output_json: "{}",
    });
    assert.equal(bad.ok, false);
    assert.match(
      bad.ok ? "" : bad.error.message,
      /^activity_id: must be between 1 and 4294967295, found 0$/,
    );
  });
});

/**
 * Drives a run to its end the way the server does: decide, record the commands' events,
 * carry out the activities (here by a function standing in for workers), record results.
 * Returns the history and every (prefix length, now, commands) decision taken.
 */
async function drive(
  def: WorkflowDefinition,
  work: (action: string, input: unknown, attempt: number) => { output: unknown } | { code: string },
) {
  const history: HistoryEvent[] = [
    started.type === "RunStarted" ? { ...started, definition_version: def.version } : started,
  ];
  const decisions: { length: number; now: number; commands: readonly Command[] }[] = [];
  let now = T0;
  for (let tick = 0; tick < 100; tick++) {
    now += 7;
    const state = replay(history);
    const { commands } = await decide(def, state, now);
    decisions.push({ length: history.length, now, commands });
    if (commands.length === 0) break;
    for (const c of commands) {
      const event = eventOf(c, now);
      if (event !== undefined) history.push(event);
    }
    for (const c of commands) {
      if (c.type !== "ScheduleActivity") continue;
      now = Math.max(now, c.dispatchAt) + 3;
      const r = work(c.action, JSON.parse(c.inputJson), c.attempt);
      history.push(
        "output" in r
          ? {
              type: "ActivityCompleted",
              at: now,
              activity_id: c.activityId,
              attempt: c.attempt,
              output_json: JSON.stringify(r.output),
            }
          : {
              type: "ActivityFailed",
              at: now,
              activity_id: c.activityId,
              attempt: c.attempt,
              code: r.code,
              message: "m",
              non_retryable: false,
            },
      );
    }
    if (replay(history).status !== "Running") break;
  }
  return { history, decisions };
}

describe("replay after a crash", () => {
  test("any prefix of history yields the same next commands; each activity completes once", async () => {
    const def = parseDefinition(
      `
name: chain
task_queue: q
retry: { max_attempts: 3, initial_backoff_ms: 10 }
steps:
  - { id: a, call: { action: inc, input: "{ 'n': input.qty }" } }
  - { id: b, call: { action: flaky, input: "{ 'n': steps.a.n }" } }
  - { id: c, call: { action: inc, input: "{ 'n': steps.b.n }" } }
output: steps.c.n
`,
      "yaml",
    );
    const { history, decisions } = await drive(def, (action, input, attempt) => {
      const n = (input as { n: number }).n;
      if (action === "flaky" && attempt < 2) return { code: "flaky" };
      return { output: { n: n + 1 } };
    });
    const final = replay(history);
    assert.equal(final.status, "Completed");
    assert.equal(final.ended?.type === "RunCompleted" ? final.ended.output_json : "", "6");
    const completions = history
      .filter((e) => e.type === "ActivityCompleted")
      .map((e) => e.activity_id);
    assert.deepEqual(completions, [1, 2, 3], "each activity completed exactly once, in order");
    // A server killed right after committing any prefix decides the same as the live run did.
    for (const d of decisions) {
      const again = await decide(def, replay(history.slice(0, d.length)), d.now);
      assert.deepEqual(again.commands, d.commands, `prefix of ${d.length} events`);
    }
  });
});
