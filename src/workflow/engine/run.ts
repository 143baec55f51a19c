/**
 * A run as the engine holds it in memory: its identity, its pinned definition, the state
 * folded from its history, and its inbox of events waiting for the next tick. `newRun` is the
 * one place a Run is built (a start, a recovery, a child). `applicable` says whether an inbox
 * event still fits the run when its tick comes (a result may have been overtaken).
 */

import type { AttemptRef } from "../../protocol/attempt.ts";
import type { WorkflowDefinition } from "../definitions/types.ts";
import { CollectMemos } from "./collect-memo.ts";
import type { HistoryEvent } from "./history.ts";
import { acceptsResult, applyInPlace, EMPTY_RUN, isLive, type RunState } from "./state.ts";
import type { RunIdentity } from "./store.ts";

export interface InboxItem {
  readonly event: HistoryEvent;
  readonly done?: () => void;
  readonly fail?: (error: unknown) => void;
}

export interface Run {
  readonly id: RunIdentity;
  readonly definition: WorkflowDefinition;
  state: RunState;
  inbox: InboxItem[];
  /** Attempts due while the run was paused; dispatched when it resumes. */
  held: AttemptRef[];
  /** What decide remembers of the run's collects (derived; a restart starts afresh). */
  readonly memos: CollectMemos;
}

/** A run record, with nothing in its inbox. */
export function newRun(id: RunIdentity, definition: WorkflowDefinition, state = EMPTY_RUN): Run {
  return { id, definition, state, inbox: [], held: [], memos: new CollectMemos() };
}

export /** Applies an event to the run's state, and tells its collect memos what it touched. */
function applyTo(run: Run, event: HistoryEvent): void {
  run.state = applyInPlace(run.state, event);
  run.memos.touch(run.state, event);
}

/** Whether an inbox event still fits the run (a result may have been overtaken). */
export function applicable(state: RunState, event: HistoryEvent): boolean {
  switch (event.type) {
    case "ActivityCompleted":
    case "ActivityFailed":
    case "ActivityTimedOut":
      return acceptsResult(state, event.activity_id, event.attempt);
    case "TimerFired":
      return isLive(state) && state.timers.get(event.timer_id)?.fired === false;
    case "RunCancelled":
    case "SignalReceived":
      return isLive(state);
    case "RunPaused":
      return state.status === "Running";
    case "RunResumed":
      return state.status === "Paused";
    default:
      return true;
  }
}
/** Whether `event` is in the run's state (checked by what it changes). */
export function recorded(run: Run, event: HistoryEvent): boolean {
  switch (event.type) {
    case "RunCancelled":
      return run.state.ended === event;
    case "SignalReceived":
      return run.state.signals.some((s) => s.payloadJson === event.payload_json);
    default:
      return true;
  }
}
