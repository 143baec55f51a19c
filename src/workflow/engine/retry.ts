/**
 * A `call` step's activity commands: its first attempt, and after a failed or timed-out
 * attempt its retry policy (backoff, `max_attempts`, non-retryable codes), which either
 * schedules the next attempt with the first attempt's input or fails the run
 * (`activity_failed`). Pure, like the rest of the decision core.
 */

import { backoffDelay } from "../../common/backoff.ts";
import type { CallStep } from "../definitions/types.ts";
import { type Command, failRun } from "./commands.ts";
import type { ActivityState } from "./state.ts";

/** The first attempt of a `call` step's activity, with its evaluated input (JSON text). */
export function schedule(
  step: CallStep,
  key: string,
  activityId: number,
  inputJson: string,
  now: number,
  member: boolean,
): Command {
  return {
    type: "ScheduleActivity",
    activityId,
    attempt: 1,
    stepId: key,
    action: step.action,
    taskQueue: step.taskQueue,
    inputJson,
    dispatchAt: now,
    startToCloseMs: step.startToCloseMs,
    heartbeatMs: step.heartbeatMs,
    ...(member ? { member: true } : {}),
  };
}

/**
 * After an attempt's result: a retry after the policy's backoff, or the run's failure when
 * attempts run out or the failure is not retryable. An attempt ended by a takeover
 * (`owner_lost`) is followed at once by the next, and attempts so ended do not count against
 * `max_attempts` or the backoff: the activity did not fail, its run changed nodes.
 */
export function retryOrFail(step: CallStep, activity: ActivityState): Command {
  const result = activity.result!;
  const attempt = activity.scheduled.attempt;
  const policy = step.retry;
  const takenOver = result.kind === "timed_out" && result.timeout === "owner_lost";
  // Attempts the policy has seen fail: this one (unless taken over) and the earlier ones.
  const counted = attempt - activity.ownerLost - (takenOver ? 1 : 0);
  const what =
    result.kind === "failed"
      ? `${result.code}: ${result.message}`
      : result.kind === "timed_out"
        ? result.timeout === "worker_lost"
          ? "worker_lost"
          : `${result.timeout}_timeout`
        : "completed";
  const final =
    !takenOver &&
    ((result.kind === "failed" &&
      (result.nonRetryable || policy.nonRetryableCodes.includes(result.code))) ||
      counted >= policy.maxAttempts);
  if (final) {
    return failRun(
      "activity_failed",
      `step ${JSON.stringify(activity.stepId)} (activity ${activity.activityId}) failed on attempt ${attempt} of ${policy.maxAttempts + activity.ownerLost}: ${what}`,
    );
  }
  const wait = takenOver
    ? 0
    : backoffDelay(
        {
          initialMs: policy.initialBackoffMs,
          maxMs: policy.maxBackoffMs,
          coefficient: policy.backoffCoefficient,
        },
        counted,
      );
  return {
    type: "ScheduleActivity",
    activityId: activity.activityId,
    attempt: attempt + 1,
    // The step instance (`c[3]/one` inside a collect), as the first attempt recorded it.
    stepId: activity.stepId,
    action: step.action,
    taskQueue: step.taskQueue,
    // A retry runs the same input: the first attempt's evaluated input is in history.
    inputJson: activity.scheduled.input_json,
    dispatchAt: result.at + wait,
    startToCloseMs: step.startToCloseMs,
    heartbeatMs: step.heartbeatMs,
    ...(activity.scheduled.member === true ? { member: true } : {}),
  };
}
