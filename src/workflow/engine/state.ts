/**
 * A run's state, folded from its history one event at a time (`apply`), so the caller can
 * keep it up to date incrementally and rebuild it from scratch after a restart
 * (`replay`). Applying an event that cannot follow the state (a result for an attempt that
 * was never scheduled, an event after the run ended) is refused as `history_corrupt`: the
 * history is the contract, and a broken one must not be papered over.
 *
 * Run status:  Running --RunCompleted--> Completed
 *              Running --RunFailed-----> Failed
 *              Running --RunPaused-----> Paused --RunResumed--> Running
 *              Running|Paused --RunCancelled--> Cancelled   (requested, or the deadline timer)
 */

import { engineFault } from "../errors.ts";
import type { EventOf, HistoryEvent, RunStatus } from "./history.ts";

export type AttemptResult =
  | { readonly kind: "completed"; readonly at: number; readonly outputJson: string }
  | {
      readonly kind: "failed";
      readonly at: number;
      readonly code: string;
      readonly message: string;
      readonly nonRetryable: boolean;
    }
  | {
      readonly kind: "timed_out";
      readonly at: number;
      readonly timeout: "start_to_close" | "heartbeat" | "worker_lost" | "owner_lost";
    };

export interface ActivityState {
  readonly activityId: number;
  readonly stepId: string;
  /** The latest scheduled attempt. */
  readonly scheduled: EventOf<"ActivityScheduled">;
  /** The latest attempt's result, once it has one. */
  readonly result: AttemptResult | undefined;
  /**
   * Earlier attempts ended by a takeover (`owner_lost`): they do not count against the retry
   * policy, since the activity did not fail; the server lost track of where it ran.
   */
  readonly ownerLost: number;
}

export interface Timer {
  readonly fireAt: number;
  readonly fired: boolean;
  /** Position in history of its TimerFired (orders a wait's timeout against signals). */
  readonly firedSeq?: number;
}

export interface ChildState {
  readonly childRunId: string;
  readonly stepId: string;
  readonly ended: EventOf<"ChildEnded"> | undefined;
}

export interface Signal {
  readonly signal: string;
  readonly payloadJson: string;
  /** Position in history. */
  readonly seq: number;
}

export interface RunState {
  readonly status: RunStatus;
  readonly started: EventOf<"RunStarted"> | undefined;
  readonly activities: ReadonlyMap<number, ActivityState>;
  readonly activityOfStep: ReadonlyMap<string, number>;
  readonly timers: ReadonlyMap<string, Timer>;
  /** Child runs by the step instance that awaits them. */
  readonly children: ReadonlyMap<string, ChildState>;
  /** The step instance of each child run, by the child's run id. */
  readonly stepOfChild: ReadonlyMap<string, string>;
  /** Signals received, in order (a wait consumes the first unconsumed one of its name). */
  readonly signals: readonly Signal[];
  readonly ended: EventOf<"RunCompleted" | "RunFailed" | "RunCancelled"> | undefined;
  /** Events applied so far. */
  readonly length: number;
}

export const EMPTY_RUN: RunState = {
  status: "Running",
  started: undefined,
  activities: new Map(),
  activityOfStep: new Map(),
  timers: new Map(),
  children: new Map(),
  stepOfChild: new Map(),
  signals: [],
  ended: undefined,
  length: 0,
};

function corrupt(state: RunState, event: HistoryEvent, why: string): never {
  throw engineFault("history_corrupt", `event ${state.length} (${event.type}): ${why}`);
}

/** The state after `event`. Never mutates `state`. */
export function apply(state: RunState, event: HistoryEvent): RunState {
  return fold(state, event, false);
}

/**
 * The state after `event`, reusing `state`'s maps (and, for the events of a step, the state
 * object itself): `state` must not be read afterwards. The
 * engine keeps one state per run and replaces it at every event, so copying a map of 10,000
 * activities for each of 10,000 results (quadratic in a large collect) buys nothing there.
 */
export function applyInPlace(state: RunState, event: HistoryEvent): RunState {
  return fold(state, event, true);
}

/** A map to write: `map` itself when folding in place (never EMPTY_RUN's), else a copy. */
function own<K, V>(map: ReadonlyMap<K, V>, inPlace: boolean): Map<K, V> {
  const shared =
    map === EMPTY_RUN.activities ||
    map === EMPTY_RUN.activityOfStep ||
    map === EMPTY_RUN.timers ||
    map === EMPTY_RUN.children ||
    map === EMPTY_RUN.stepOfChild;
  return inPlace && !shared ? (map as Map<K, V>) : new Map(map);
}

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The state object to write the event's changes to: `state` itself when folding in place,
 * else a copy. A copy of the state per event was about 100 bytes, two events a step.
 */
function target(state: RunState, inPlace: boolean): Writable<RunState> {
  return inPlace && state !== EMPTY_RUN ? (state as Writable<RunState>) : { ...state };
}

function fold(state: RunState, event: HistoryEvent, inPlace: boolean): RunState {
  const length = state.length + 1;
  if (event.type === "RunStarted") {
    if (state.length !== 0) corrupt(state, event, "RunStarted must be the first event");
    return { ...state, started: event, length };
  }
  if (state.started === undefined) corrupt(state, event, "the first event must be RunStarted");
  if (state.ended !== undefined)
    corrupt(state, event, `the run already ended (${state.ended.type})`);
  switch (event.type) {
    case "ActivityScheduled": {
      const prior = state.activities.get(event.activity_id);
      if (prior === undefined) {
        if (event.attempt !== 1) corrupt(state, event, "a new activity starts at attempt 1");
        if (event.activity_id !== state.activities.size + 1) {
          corrupt(
            state,
            event,
            `activity ids follow their position; expected ${state.activities.size + 1}`,
          );
        }
      } else {
        if (prior.result === undefined) corrupt(state, event, "the previous attempt has no result");
        if (prior.result.kind === "completed")
          corrupt(state, event, "the activity already completed");
        if (event.attempt !== prior.scheduled.attempt + 1)
          corrupt(state, event, "attempts count up by one");
      }
      const lost = prior?.result?.kind === "timed_out" && prior.result.timeout === "owner_lost";
      const activities = own(state.activities, inPlace);
      activities.set(event.activity_id, {
        activityId: event.activity_id,
        stepId: event.step_id,
        scheduled: event,
        result: undefined,
        ownerLost: (prior?.ownerLost ?? 0) + (lost ? 1 : 0),
      });
      const activityOfStep = own(state.activityOfStep, inPlace);
      activityOfStep.set(event.step_id, event.activity_id);
      const out = target(state, inPlace);
      out.activities = activities;
      out.activityOfStep = activityOfStep;
      out.length = length;
      return out;
    }
    case "ActivityCompleted":
    case "ActivityFailed":
    case "ActivityTimedOut": {
      const activity = state.activities.get(event.activity_id);
      if (activity === undefined) corrupt(state, event, "no such activity");
      if (activity.scheduled.attempt !== event.attempt)
        corrupt(state, event, "not the current attempt");
      if (activity.result !== undefined) corrupt(state, event, "the attempt already has a result");
      const result: AttemptResult =
        event.type === "ActivityCompleted"
          ? { kind: "completed", at: event.at, outputJson: event.output_json }
          : event.type === "ActivityFailed"
            ? {
                kind: "failed",
                at: event.at,
                code: event.code,
                message: event.message,
                nonRetryable: event.non_retryable,
              }
            : { kind: "timed_out", at: event.at, timeout: event.timeout };
      const activities = own(state.activities, inPlace);
      activities.set(event.activity_id, { ...activity, result });
      const out = target(state, inPlace);
      out.activities = activities;
      out.length = length;
      return out;
    }
    case "TimerStarted": {
      if (state.timers.has(event.timer_id)) corrupt(state, event, "the timer already exists");
      const timers = own(state.timers, inPlace);
      timers.set(event.timer_id, { fireAt: event.fire_at, fired: false });
      const out = target(state, inPlace);
      out.timers = timers;
      out.length = length;
      return out;
    }
    case "TimerFired": {
      const timer = state.timers.get(event.timer_id);
      if (timer === undefined || timer.fired) corrupt(state, event, "no such pending timer");
      const timers = own(state.timers, inPlace);
      timers.set(event.timer_id, { ...timer, fired: true, firedSeq: state.length });
      const out = target(state, inPlace);
      out.timers = timers;
      out.length = length;
      return out;
    }
    case "ChildStarted": {
      if (state.children.has(event.step_id)) corrupt(state, event, "the step already has a child");
      const children = own(state.children, inPlace);
      children.set(event.step_id, {
        childRunId: event.child_run_id,
        stepId: event.step_id,
        ended: undefined,
      });
      const stepOfChild = own(state.stepOfChild, inPlace);
      stepOfChild.set(event.child_run_id, event.step_id);
      return { ...state, children, stepOfChild, length };
    }
    case "ChildEnded": {
      const stepId = state.stepOfChild.get(event.child_run_id);
      const child = stepId === undefined ? undefined : state.children.get(stepId);
      if (child === undefined || child.ended !== undefined)
        corrupt(state, event, "no such live child");
      const children = own(state.children, inPlace);
      children.set(child.stepId, { ...child, ended: event });
      return { ...state, children, length };
    }
    case "SignalReceived":
      return {
        ...state,
        signals: [
          ...state.signals,
          { signal: event.signal, payloadJson: event.payload_json, seq: state.length },
        ],
        length,
      };
    case "RunPaused":
      if (state.status !== "Running") corrupt(state, event, "only a Running run pauses");
      return { ...state, status: "Paused", length };
    case "RunResumed":
      if (state.status !== "Paused") corrupt(state, event, "only a Paused run resumes");
      return { ...state, status: "Running", length };
    case "RunCompleted":
      return { ...state, status: "Completed", ended: event, length };
    case "RunFailed":
      return { ...state, status: "Failed", ended: event, length };
    case "RunCancelled":
      return { ...state, status: "Cancelled", ended: event, length };
  }
}

/** The state after a whole history. */
export function replay(history: readonly HistoryEvent[]): RunState {
  let state = EMPTY_RUN;
  // Intermediate states are never seen, so the fold may reuse their maps.
  for (const event of history) state = applyInPlace(state, event);
  return state;
}

/** Attempts scheduled and still without a result: what a restarted server re-dispatches. */
export function inFlight(state: RunState): EventOf<"ActivityScheduled">[] {
  const out: EventOf<"ActivityScheduled">[] = [];
  for (const a of state.activities.values()) if (a.result === undefined) out.push(a.scheduled);
  return out;
}

/** Timers started and not fired: what a restarted server re-arms. */
export function pendingTimers(state: RunState): { timerId: string; fireAt: number }[] {
  const out: { timerId: string; fireAt: number }[] = [];
  for (const [timerId, t] of state.timers) if (!t.fired) out.push({ timerId, fireAt: t.fireAt });
  return out;
}

/**
 * Whether a worker's result for an attempt may be recorded: only for the current attempt of
 * an activity that has no result yet, in a running run. Anything else is stale (a resend, a
 * timed-out attempt finishing late) and must not be appended, so each activity completes at
 * most once in history.
 */
export function acceptsResult(state: RunState, activityId: number, attempt: number): boolean {
  // A Paused run still records the work in flight when it paused.
  if (!isLive(state)) return false;
  const a = state.activities.get(activityId);
  return a !== undefined && a.scheduled.attempt === attempt && a.result === undefined;
}

/** Whether the run has not ended (Running or Paused). */
export function isLive(state: RunState): boolean {
  return state.status === "Running" || state.status === "Paused";
}

/** Child runs started and not ended: what a cancellation cascades to. */
export function liveChildren(state: RunState): string[] {
  const out: string[] = [];
  for (const c of state.children.values()) if (c.ended === undefined) out.push(c.childRunId);
  return out;
}
