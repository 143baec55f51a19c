/**
 * What the decision core asks for. Every command but CancelActivity is recorded as one
 * history event (`eventOf`) in the same transaction as the other events of the engine tick;
 * StartChild is recorded by the engine (ChildStarted), which first resolves the child's
 * definition; the caller then carries out the side effects: offer a scheduled attempt to the matcher at
 * its dispatch time and arm its timeouts, arm a timer, send cancel-activity frames.
 */

import type { RunFailureCode } from "../errors.ts";
import type { EventOf, HistoryEvent } from "./history.ts";

export type Command =
  | {
      readonly type: "ScheduleActivity";
      readonly activityId: number;
      readonly attempt: number;
      readonly stepId: string;
      readonly action: string;
      readonly taskQueue: string;
      readonly inputJson: string;
      /** Offer to workers at this time (now, or after the retry backoff). */
      readonly dispatchAt: number;
      readonly startToCloseMs: number;
      /** 0: no heartbeat timeout. */
      readonly heartbeatMs: number;
      /** A member of a `parallel` or `collect`: goes through the outbox, not straight out. */
      readonly member?: boolean;
    }
  | {
      /** Start a child run; the engine resolves its definition and records ChildStarted. */
      readonly type: "StartChild";
      readonly stepId: string;
      readonly workflow: string;
      readonly version: string | undefined;
      readonly inputJson: string;
    }
  | { readonly type: "StartTimer"; readonly timerId: string; readonly fireAt: number }
  | {
      readonly type: "CancelActivity";
      readonly activityId: number;
      readonly attempt: number;
      readonly reason: string;
    }
  | { readonly type: "CompleteRun"; readonly outputJson: string }
  | { readonly type: "FailRun"; readonly code: string; readonly message: string }
  | { readonly type: "CancelRun"; readonly reason: "requested" | "deadline" };

/** A FailRun whose code is one of the catalogue's run failures. */
export function failRun(code: RunFailureCode, message: string): Command {
  return { type: "FailRun", code, message };
}

/** The history event that records `command` at time `at`; undefined for side effects only. */
export function eventOf(command: Command, at: number): HistoryEvent | undefined {
  switch (command.type) {
    case "ScheduleActivity":
      return {
        type: "ActivityScheduled",
        at,
        activity_id: command.activityId,
        attempt: command.attempt,
        step_id: command.stepId,
        action: command.action,
        task_queue: command.taskQueue,
        input_json: command.inputJson,
        dispatch_at: command.dispatchAt,
        start_to_close_ms: command.startToCloseMs,
        heartbeat_ms: command.heartbeatMs,
        ...(command.member === true ? { member: true } : {}),
      } satisfies EventOf<"ActivityScheduled">;
    case "StartTimer":
      return { type: "TimerStarted", at, timer_id: command.timerId, fire_at: command.fireAt };
    case "CompleteRun":
      return { type: "RunCompleted", at, output_json: command.outputJson };
    case "FailRun":
      return { type: "RunFailed", at, code: command.code, message: command.message };
    case "CancelRun":
      return { type: "RunCancelled", at, reason: command.reason };
    case "CancelActivity":
    case "StartChild":
      return undefined;
  }
}
