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
 * is not retryable. A `sleep` starts a durable timer and waits for it to fire. The run's
 * deadline is a timer started with the run; when it fires the run is cancelled and its
 * in-flight attempts are told to stop. After the last step the run completes with its output
 * expression (or the last step's output). `parallel`, `collect`, `child` and `wait` steps
 * fail the run with `step_not_supported` in this build.
 */

import { backoffDelay } from "../../common/backoff.ts";
import { SkeinError } from "../../common/errors.ts";
import type { CallStep, WorkflowDefinition } from "../definitions/types.ts";
import type { Command } from "./commands.ts";
import { type ActivityState, inFlight, type RunState } from "./state.ts";

export const DEADLINE_TIMER = "deadline";
export const sleepTimer = (stepId: string) => `sleep:${stepId}`;

export interface Decision {
  readonly commands: readonly Command[];
}

const NONE: Decision = { commands: [] };

export async function decide(
  definition: WorkflowDefinition,
  state: RunState,
  now: number,
): Promise<Decision> {
  const started = state.started;
  if (started === undefined) return NONE;
  if (state.status === "Cancelled")
    return { commands: cancelInFlight(state, "the run was cancelled") };
  if (state.status !== "Running") return NONE;
  if (started.definition_version !== definition.version) {
    throw new SkeinError(
      "definition_mismatch",
      `the run pinned ${started.definition_version}, not ${definition.version}`,
      { status: 500 },
    );
  }

  const commands: Command[] = [];
  if (definition.deadlineMs > 0) {
    const deadline = state.timers.get(DEADLINE_TIMER);
    if (deadline === undefined) {
      commands.push({
        type: "StartTimer",
        timerId: DEADLINE_TIMER,
        fireAt: started.at + definition.deadlineMs,
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

  const input: unknown = JSON.parse(started.input_json);
  const outputs: Record<string, unknown> = {};
  let last: unknown = null;
  for (const step of definition.steps) {
    switch (step.kind) {
      case "call": {
        const id = state.activityOfStep.get(step.id);
        if (id === undefined) {
          const scheduled = await schedule(step, state, input, outputs, now);
          commands.push(scheduled);
          return { commands };
        }
        const activity = state.activities.get(id)!;
        const result = activity.result;
        if (result === undefined) return { commands };
        if (result.kind === "completed") {
          last = JSON.parse(result.outputJson);
          outputs[step.id] = last;
          continue;
        }
        commands.push(retryOrFail(step, activity));
        return { commands };
      }
      case "sleep": {
        const timer = state.timers.get(sleepTimer(step.id));
        if (timer === undefined) {
          commands.push({
            type: "StartTimer",
            timerId: sleepTimer(step.id),
            fireAt: now + step.durationMs,
          });
          return { commands };
        }
        if (!timer.fired) return { commands };
        last = null;
        outputs[step.id] = null;
        continue;
      }
      default:
        commands.push({
          type: "FailRun",
          code: "step_not_supported",
          message: `step ${JSON.stringify(step.id)} is a ${step.kind} step; this build's engine runs call and sleep steps`,
        });
        return { commands };
    }
  }
  try {
    const output =
      definition.output === undefined
        ? last
        : await definition.output.evaluate({ input, steps: outputs });
    commands.push({ type: "CompleteRun", outputJson: JSON.stringify(output) });
  } catch (error) {
    commands.push(failExpression("output", error));
  }
  return { commands };
}

async function schedule(
  step: CallStep,
  state: RunState,
  input: unknown,
  outputs: Record<string, unknown>,
  now: number,
): Promise<Command> {
  let value: unknown;
  try {
    value = await step.input.evaluate({ input, steps: outputs });
  } catch (error) {
    return failExpression(`steps.${step.id}.call.input`, error);
  }
  return {
    type: "ScheduleActivity",
    activityId: state.activities.size + 1,
    attempt: 1,
    stepId: step.id,
    action: step.action,
    taskQueue: step.taskQueue,
    inputJson: JSON.stringify(value),
    dispatchAt: now,
    startToCloseMs: step.startToCloseMs,
    heartbeatMs: step.heartbeatMs,
  };
}

function retryOrFail(step: CallStep, activity: ActivityState): Command {
  const result = activity.result!;
  const attempt = activity.scheduled.attempt;
  const policy = step.retry;
  const what =
    result.kind === "failed"
      ? `${result.code}: ${result.message}`
      : result.kind === "timed_out"
        ? result.timeout === "worker_lost"
          ? "worker_lost"
          : `${result.timeout}_timeout`
        : "completed";
  const final =
    (result.kind === "failed" &&
      (result.nonRetryable || policy.nonRetryableCodes.includes(result.code))) ||
    attempt >= policy.maxAttempts;
  if (final) {
    return {
      type: "FailRun",
      code: "activity_failed",
      message: `step ${JSON.stringify(step.id)} (activity ${activity.activityId}) failed on attempt ${attempt} of ${policy.maxAttempts}: ${what}`,
    };
  }
  const wait = backoffDelay(
    {
      initialMs: policy.initialBackoffMs,
      maxMs: policy.maxBackoffMs,
      coefficient: policy.backoffCoefficient,
    },
    attempt,
  );
  return {
    type: "ScheduleActivity",
    activityId: activity.activityId,
    attempt: attempt + 1,
    stepId: step.id,
    action: step.action,
    taskQueue: step.taskQueue,
    // A retry runs the same input: the first attempt's evaluated input is in history.
    inputJson: activity.scheduled.input_json,
    dispatchAt: result.at + wait,
    startToCloseMs: step.startToCloseMs,
    heartbeatMs: step.heartbeatMs,
  };
}

function failExpression(where: string, error: unknown): Command {
  if (!(error instanceof SkeinError)) throw error;
  return { type: "FailRun", code: error.code, message: `${where}: ${error.message}` };
}

function cancelInFlight(state: RunState, reason: string): Command[] {
  return inFlight(state).map((s) => ({
    type: "CancelActivity",
    activityId: s.activity_id,
    attempt: s.attempt,
    reason,
  }));
}
