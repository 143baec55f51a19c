/**
 * The engine's decision core: a pure, deterministic function from a run's definition and
 * state (folded from its durable history) and the current time to the commands that move
 * the run on. It does no I/O and keeps nothing between calls, so the caller can run it after
 * every batch of new events, and again from history after a crash: for the same history and
 * time it returns the same commands, and a step whose result is in history is never
 * scheduled again.
 *
 * Steps run in order. A `call` schedules its activity (activity ids are positions in the
 * run, from 1; attempts from 1), waits for its result, retries a retryable failure or
 * timeout after the policy's backoff, and fails the run when attempts run out or the failure
 * is not retryable. A `sleep` starts a durable timer and waits for it to fire. A `parallel`
 * runs its branches at once and a `collect` its body once per item; the activities inside
 * them are members, marked for the outbox. A `child` starts a child run and waits for its
 * end. A `wait` takes the first unconsumed signal of its name (signals received before the
 * wait count), or times out. The run's deadline (from the definition, or given at start) is
 * a timer started with the run; when it fires the run is cancelled and its in-flight
 * attempts are told to stop. A Paused run decides nothing new. After the last step the run
 * completes with its output expression (or the last step's output).
 *
 * Nested steps are keyed by their instance: a step inside item `i` of collect `c` is
 * `c[i]/<id>`, so each item has its own activity, timer, child and signal wait.
 *
 * Given the run's `CollectMemos` (collect-memo.ts), a collect walks only the members whose
 * results changed since the previous call; the commands are the same as a full walk's.
 */

import { SkeinError } from "../../common/errors.ts";
import type { Scope } from "../definitions/expression.ts";
import type {
  CallStep,
  ChildStep,
  CollectStep,
  ParallelStep,
  Step,
  WorkflowDefinition,
} from "../definitions/types.ts";
import { engineFault } from "../errors.ts";
import { type CollectMemo, type CollectMemos, type DonePrefix, hasWait } from "./collect-memo.ts";
import { type Command, failRun } from "./commands.ts";
import { retryOrFail, schedule } from "./retry.ts";
import { inFlight, type RunState } from "./state.ts";

export const DEADLINE_TIMER = "deadline";
export const sleepTimer = (stepId: string) => `sleep:${stepId}`;
export const waitTimer = (stepId: string) => `wait:${stepId}`;

export interface Decision {
  readonly commands: readonly Command[];
}

const NONE: Decision = { commands: [] };

/**
 * A step's outcome. A finished `call` keeps its output as the JSON text history holds
 * (`json`): it is parsed only when an expression's scope or the run's output reads it, so a
 * run whose inputs are constants parses none of its steps' outputs while it runs.
 */
type Outcome =
  | { readonly done: true; readonly value: unknown; readonly json?: undefined }
  | { readonly done: true; readonly json: string }
  | { readonly done: false };
type Done = Extract<Outcome, { done: true }>;
const PENDING: Outcome = { done: false };
const DONE_NULL: Outcome = { done: true, value: null };
const done = (value: unknown): Outcome => ({ done: true, value });
const outputOf = (outcome: Done): unknown =>
  outcome.json === undefined ? outcome.value : JSON.parse(outcome.json);

/** One decide pass over the step tree. */
interface Walk {
  readonly state: RunState;
  readonly now: number;
  readonly commands: Command[];
  nextActivityId: number;
  /**
   * Signals (by history position) already taken by a wait earlier in the walk; made when a
   * wait first reads it (`consumedOf`), so a walk without one makes no set.
   */
  consumed: Set<number> | undefined;
  /** Set when the run must fail; the walk stops. */
  fail: Command | undefined;
  readonly memos: CollectMemos | undefined;
  /**
   * The top-level steps' outputs read so far, by step id (the scope's `steps`); made, like
   * `unread`, when an expression first reads them: most walks of a run of constant inputs
   * read none, and an object and an array made and grown per decision cost about 200 bytes.
   */
  outputs: Record<string, unknown> | undefined;
  /** Without a prefix: top-level steps finished and not yet put in `outputs`. */
  unread: [id: string, outcome: Done][] | undefined;
  /**
   * The steps known finished: those before this walk (skipped), and those it finishes, in
   * order; the first `read` of them are in `outputs`.
   */
  readonly prefix: DonePrefix | undefined;
  read: number;
  /** The top-level scope, made when an expression first needs it. */
  top: Scope | undefined;
}

/** The signals taken so far in the walk: those of the skipped prefix, then the walk's own. */
function consumedOf(walk: Walk): Set<number> {
  walk.consumed ??= new Set(walk.prefix?.consumed);
  return walk.consumed;
}

/**
 * The scope of a top-level step: the run's input (parsed once per walk, when first read) and
 * the outputs of the steps before it.
 */
function topScope(walk: Walk): Scope {
  walk.outputs ??= {};
  const { outputs, prefix, unread } = walk;
  if (prefix !== undefined) {
    for (; walk.read < prefix.outcomes.length; walk.read++) {
      const [id, outcome] = prefix.outcomes[walk.read]!;
      outputs[id] = outputOf(outcome as Done);
    }
  } else if (unread !== undefined) {
    for (const [id, outcome] of unread) outputs[id] = outputOf(outcome);
    unread.length = 0;
  }
  walk.top ??= { input: JSON.parse(walk.state.started!.input_json), steps: outputs };
  return walk.top;
}

export async function decide(
  definition: WorkflowDefinition,
  state: RunState,
  now: number,
  memos?: CollectMemos,
): Promise<Decision> {
  return decideNow(definition, state, now, memos);
}

/**
 * `decide`, without a promise when nothing in the walk awaited (no expression to evaluate
 * but constants, no output expression): the engine's tick calls this, so a step of a run of
 * constant inputs decides without a promise or a microtask turn. Throws (or rejects) as
 * `decide` rejects.
 */
export function decideNow(
  definition: WorkflowDefinition,
  state: RunState,
  now: number,
  memos?: CollectMemos,
): Decision | Promise<Decision> {
  const started = state.started;
  if (started === undefined) return NONE;
  if (state.status === "Cancelled")
    return { commands: cancelInFlight(state, "the run was cancelled") };
  if (state.status !== "Running" && state.status !== "Paused") return NONE;
  if (started.definition_version !== definition.version) {
    throw engineFault(
      "definition_mismatch",
      `the run pinned ${started.definition_version}, not ${definition.version}`,
    );
  }

  const commands: Command[] = [];
  const deadlineMs = started.deadline_ms ?? definition.deadlineMs;
  if (deadlineMs > 0) {
    const deadline = state.timers.get(DEADLINE_TIMER);
    if (deadline === undefined) {
      commands.push({
        type: "StartTimer",
        timerId: DEADLINE_TIMER,
        fireAt: started.at + deadlineMs,
      });
    } else if (deadline.fired) {
      return {
        commands: [
          { type: "CancelRun", reason: "deadline" },
          ...cancelInFlight(state, "the run's deadline passed"),
        ],
      };
    }
  }
  // A Paused run dispatches nothing new; what was in flight finishes and is recorded.
  if (state.status === "Paused") return { commands };

  const prefix = memos?.prefix;
  const skipped = prefix?.outcomes.length ?? 0;
  const walk: Walk = {
    state,
    now,
    commands,
    nextActivityId: state.activities.size + 1,
    consumed: undefined,
    fail: undefined,
    memos,
    outputs: undefined,
    unread: undefined,
    prefix,
    read: 0,
    top: undefined,
  };
  const last = skipped === 0 ? undefined : (prefix!.outcomes[skipped - 1]![1] as Done);
  return walkSteps(walk, definition, skipped, last);
}

/**
 * The top-level steps from `from` on, in order. Synchronous while each step is: a step that
 * returns a promise continues the walk once it settles.
 */
function walkSteps(
  walk: Walk,
  definition: WorkflowDefinition,
  from: number,
  last: Done | undefined,
): Decision | Promise<Decision> {
  const steps = definition.steps;
  for (let i = from; i < steps.length; i++) {
    const step = steps[i]!;
    const outcome = runStep(walk, step, "", undefined, false);
    if (outcome instanceof Promise) {
      return outcome.then((settled) => {
        const end = stepEnded(walk, step, settled);
        return end ?? walkSteps(walk, definition, i + 1, settled as Done);
      });
    }
    const end = stepEnded(walk, step, outcome);
    if (end !== undefined) return end;
    last = outcome as Done;
  }
  return complete(walk, definition, last);
}

/** The decision when the walk stops at this step (the run fails, or the step waits). */
function stepEnded(walk: Walk, step: Step, outcome: Outcome): Decision | undefined {
  if (walk.fail !== undefined) return failed(walk);
  if (!outcome.done) return { commands: walk.commands };
  // The run's prefix keeps it (topScope reads it there); a walk without one, its own list.
  const entry: [id: string, outcome: Done] = [step.id, outcome as Done];
  // Every step before this one is done too (the walk stops at the first that is not).
  const prefix = walk.prefix;
  if (prefix === undefined) {
    walk.unread ??= [];
    walk.unread.push(entry);
  } else {
    prefix.outcomes.push(entry);
    if (walk.consumed !== undefined && walk.consumed.size !== prefix.consumed.length) {
      prefix.consumed = [...walk.consumed];
    }
  }
  return undefined;
}

/** Every step is done: the run completes with its output expression, or the last output. */
function complete(
  walk: Walk,
  definition: WorkflowDefinition,
  last: Done | undefined,
): Decision | Promise<Decision> {
  const { commands } = walk;
  if (definition.output === undefined) {
    const output = last === undefined ? null : outputOf(last);
    commands.push({ type: "CompleteRun", outputJson: JSON.stringify(output) });
    return { commands };
  }
  let scope: Scope;
  try {
    scope = topScope(walk);
  } catch (error) {
    commands.push(failExpression("output", error));
    return { commands };
  }
  return definition.output.evaluate(scope).then(
    (output) => {
      commands.push({ type: "CompleteRun", outputJson: JSON.stringify(output) });
      return { commands };
    },
    (error: unknown) => {
      commands.push(failExpression("output", error));
      return { commands };
    },
  );
}

/** The run fails: only the failure and the stop of its in-flight attempts go out. */
function failed(walk: Walk): Decision {
  return {
    commands: [walk.fail!, ...cancelInFlight(walk.state, "the run failed")],
  };
}

async function evaluate(
  walk: Walk,
  where: string,
  run: () => Promise<unknown>,
): Promise<{ ok: true; value: unknown } | { ok: false }> {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    walk.fail = failExpression(where, error);
    return { ok: false };
  }
}

/**
 * One step of the walk. `scope` is undefined for a top-level step (topScope makes it when
 * an expression reads it). Synchronous for what most steps are, a call, sleep or wait that
 * needs no evaluation; a promise otherwise.
 */
function runStep(
  walk: Walk,
  step: Step,
  prefix: string,
  scope: Scope | undefined,
  member: boolean,
): Outcome | Promise<Outcome> {
  const key = `${prefix}${step.id}`;
  const { state } = walk;
  switch (step.kind) {
    case "call": {
      const id = state.activityOfStep.get(key);
      if (id === undefined) {
        const constant = step.input.constantJson;
        if (constant === undefined) return scheduleEvaluated(walk, step, key, scope, member);
        walk.commands.push(schedule(step, key, walk.nextActivityId++, constant, walk.now, member));
        return PENDING;
      }
      const activity = state.activities.get(id)!;
      const result = activity.result;
      if (result === undefined) return PENDING;
      if (result.kind === "completed") return { done: true, json: result.outputJson };
      const next = retryOrFail(step, activity);
      if (next.type === "FailRun") walk.fail = next;
      else walk.commands.push(next);
      return PENDING;
    }
    case "sleep": {
      const timer = state.timers.get(sleepTimer(key));
      if (timer === undefined) {
        walk.commands.push({
          type: "StartTimer",
          timerId: sleepTimer(key),
          fireAt: walk.now + step.durationMs,
        });
        return PENDING;
      }
      return timer.fired ? DONE_NULL : PENDING;
    }
    case "wait": {
      const timer = state.timers.get(waitTimer(key));
      const firedSeq = timer?.fired === true ? timer.firedSeq : undefined;
      const consumed = consumedOf(walk);
      const signal = state.signals.find(
        (s) =>
          s.signal === step.signal &&
          !consumed.has(s.seq) &&
          (firedSeq === undefined || s.seq < firedSeq),
      );
      if (signal !== undefined) {
        consumed.add(signal.seq);
        return { done: true, json: signal.payloadJson };
      }
      if (timer?.fired === true) {
        if (step.onTimeout === "continue") return DONE_NULL;
        walk.fail = failRun(
          "wait_timed_out",
          `step ${JSON.stringify(key)} waited ${step.timeoutMs} ms for signal ${JSON.stringify(step.signal)}`,
        );
        return PENDING;
      }
      if (step.timeoutMs > 0 && timer === undefined) {
        walk.commands.push({
          type: "StartTimer",
          timerId: waitTimer(key),
          fireAt: walk.now + step.timeoutMs,
        });
      }
      return PENDING;
    }
    case "child": {
      const child = state.children.get(key);
      if (child === undefined) return startChild(walk, step, key, scope);
      const end = child.ended;
      if (end === undefined) return PENDING;
      if (end.status === "Completed") return { done: true, json: end.output_json };
      walk.fail = failRun(
        end.status === "Failed" ? "child_failed" : "child_cancelled",
        `step ${JSON.stringify(key)}: child run ${end.child_run_id} ${end.status.toLowerCase()}${end.message === "" ? "" : `: ${end.message}`}`,
      );
      return PENDING;
    }
    case "parallel":
      return runParallel(walk, step, prefix, scope);
    case "collect": {
      const memo = walk.memos?.get(key);
      if (memo !== undefined) return walkTouched(walk, step, key, scope ?? topScope(walk), memo);
      return runCollect(walk, step, key, scope ?? topScope(walk));
    }
  }
}

/** A call's first attempt whose input is an expression over the scope. */
async function scheduleEvaluated(
  walk: Walk,
  step: CallStep,
  key: string,
  scope: Scope | undefined,
  member: boolean,
): Promise<Outcome> {
  const input = await evaluate(walk, `steps.${key}.call.input`, () =>
    step.input.evaluate(scope ?? topScope(walk)),
  );
  if (!input.ok) return PENDING;
  walk.commands.push(
    schedule(step, key, walk.nextActivityId++, JSON.stringify(input.value), walk.now, member),
  );
  return PENDING;
}

async function startChild(
  walk: Walk,
  step: ChildStep,
  key: string,
  scope: Scope | undefined,
): Promise<Outcome> {
  const input = await evaluate(walk, `steps.${key}.child.input`, () =>
    step.input.evaluate(scope ?? topScope(walk)),
  );
  if (!input.ok) return PENDING;
  walk.commands.push({
    type: "StartChild",
    stepId: key,
    workflow: step.workflow,
    version: step.version,
    inputJson: JSON.stringify(input.value),
  });
  return PENDING;
}

async function runParallel(
  walk: Walk,
  step: ParallelStep,
  prefix: string,
  scope: Scope | undefined,
): Promise<Outcome> {
  const out: Record<string, unknown> = {};
  let all = true;
  for (const branch of step.branches) {
    const outcome = await runStep(walk, branch, prefix, scope, true);
    if (walk.fail !== undefined) return PENDING;
    if (outcome.done) out[branch.id] = outputOf(outcome);
    else all = false;
  }
  return all ? done(out) : PENDING;
}

async function runCollect(
  walk: Walk,
  step: CollectStep,
  key: string,
  scope: Scope,
): Promise<Outcome> {
  const items = await evaluate(walk, `steps.${key}.collect.items`, () =>
    step.items.evaluate(scope),
  );
  if (!items.ok) return PENDING;
  if (!Array.isArray(items.value)) {
    walk.fail = failRun(
      "expression_failed",
      `steps.${key}.collect.items: must yield an array, found ${items.value === null ? "null" : typeof items.value}`,
    );
    return PENDING;
  }
  if (items.value.length > step.maxItems) {
    walk.fail = failRun(
      "collect_too_many_items",
      `steps.${key}.collect.items: ${items.value.length} items, more than max_items (${step.maxItems})`,
    );
    return PENDING;
  }
  const values: unknown[] = [];
  const isDone: boolean[] = [];
  let all = true;
  for (const [i, item] of items.value.entries()) {
    const outcome = await runStep(
      walk,
      step.body,
      `${key}[${i}]/`,
      { input: scope.input, steps: scope.steps, item },
      true,
    );
    if (walk.fail !== undefined) return PENDING;
    isDone.push(outcome.done);
    values.push(outcome.done ? outputOf(outcome) : undefined);
    if (!outcome.done) all = false;
  }
  if (walk.memos !== undefined && !hasWait(step.body)) {
    const count = isDone.filter(Boolean).length;
    walk.memos.set(key, {
      items: items.value,
      values,
      isDone,
      done: count,
      touched: new Set(),
    });
  }
  return all ? done(values) : PENDING;
}

/** A remembered collect: only the members touched since the last walk are walked again. */
async function walkTouched(
  walk: Walk,
  step: CollectStep,
  key: string,
  scope: Scope,
  memo: CollectMemo,
): Promise<Outcome> {
  if (memo.touched.size > 0) {
    // In member order, as a full walk would meet them.
    const touched = [...memo.touched].sort((a, b) => a - b);
    memo.touched.clear();
    for (const i of touched) {
      if (memo.isDone[i] === true) continue;
      const outcome = await runStep(
        walk,
        step.body,
        `${key}[${i}]/`,
        { input: scope.input, steps: scope.steps, item: memo.items[i] },
        true,
      );
      if (walk.fail !== undefined) return PENDING;
      if (outcome.done) {
        memo.values[i] = outputOf(outcome);
        memo.isDone[i] = true;
        memo.done++;
      }
    }
  }
  return memo.done === memo.items.length ? done(memo.values) : PENDING;
}

function failExpression(where: string, error: unknown): Command {
  if (!(error instanceof SkeinError)) throw error;
  return { type: "FailRun", code: error.code, message: `${where}: ${error.message}` };
}

/** Cancel commands for every attempt of the run still without a result. */
export function cancelInFlight(state: RunState, reason: string): Command[] {
  return inFlight(state).map((s) => ({
    type: "CancelActivity",
    activityId: s.activity_id,
    attempt: s.attempt,
    reason,
  }));
}
