/**
 * An activity attempt's life in the engine: dispatch (at once, after a retry delay, to the
 * outbox for parallel and collect members, or held while the run is paused), the offer to the
 * matcher, the start-to-close, heartbeat and worker-lost timeouts (armed once a worker holds
 * the attempt), and the results and heartbeats the matcher reports back. A result that is no
 * longer wanted (a resend, a late attempt after a timeout, a run that ended) is dropped here
 * and never reaches history: each activity completes at most once.
 */

import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../../common/decode/sources.ts";
import { SkeinError } from "../../common/errors.ts";
import { type AttemptRef, attemptKey } from "../../protocol/attempt.ts";
import type { AttemptFailureCode } from "../errors.ts";
import type { Command } from "./commands.ts";
import { type EngineCore, TIMERS, type TimerPayload } from "./core.ts";
import type { MatcherEvents, ResultContext, ResultReceipt } from "./dispatcher.ts";
import type { EventOf } from "./history.ts";
import { enqueueInternal, enqueueResult } from "./inbox.ts";
import type { OutboxEntry } from "./outbox.ts";
import type { Run } from "./run.ts";
import { acceptsResult, isLive } from "./state.ts";

/**
 * Why a worker's output cannot enter history, or undefined when it can: it must be JSON, and
 * no deeper than every JSON edge of the server accepts (a stored output is read back through
 * the common parser, so a deeper one would make the run unreadable).
 */
function outputProblem(text: string): string | undefined {
  if (jsonDepthExceeds(text)) {
    return `the worker's output is nested deeper than ${MAX_JSON_DEPTH} levels`;
  }
  try {
    JSON.parse(text);
    return undefined;
  } catch {
    return `the worker's output is not valid JSON (${text.length} characters)`;
  }
}

/** What the matcher reports, flowing into the engine: results, heartbeats, (re-)attachment. */
export function matcherEvents(core: EngineCore): MatcherEvents {
  const events: MatcherEvents = {
    // Output that is not JSON fails the attempt (retried by its policy): it never reaches
    // history, where the decision core could not read it.
    completed: (ref, outputJson, ctx, receipt) => {
      const run = resultRun(core, ref, outputJson, ctx, receipt, events.completed);
      if (run === undefined) return;
      const at = core.now();
      const problem = outputProblem(outputJson);
      enqueueResult(
        core,
        run,
        problem === undefined
          ? {
              type: "ActivityCompleted",
              at,
              activity_id: ref.activity_id,
              attempt: ref.attempt,
              output_json: outputJson,
            }
          : {
              type: "ActivityFailed",
              at,
              activity_id: ref.activity_id,
              attempt: ref.attempt,
              code: "bad_output" satisfies AttemptFailureCode,
              message: problem,
              non_retryable: false,
            },
        receipt,
      );
    },
    failed: (ref, failure, ctx, receipt) => {
      const run = resultRun(core, ref, failure, ctx, receipt, events.failed);
      if (run === undefined) return;
      enqueueResult(
        core,
        run,
        {
          type: "ActivityFailed",
          at: core.now(),
          activity_id: ref.activity_id,
          attempt: ref.attempt,
          code: failure.code,
          message: failure.message,
          non_retryable: failure.nonRetryable,
        },
        receipt,
      );
    },
    heartbeat: (ref) => {
      core.beats.set(attemptKey(ref), core.now());
    },
    // A worker's stream ended while it held these attempts: it may come back and re-attach
    // them; if it does not within the grace, they are lost and retried.
    detached: (refs) => {
      const at = core.now() + core.reattachGraceMs;
      for (const ref of refs) {
        if (!core.runs.has(ref.run_id)) continue;
        core.timers.set(
          attemptKey(ref),
          at,
          { kind: "worker_lost", runId: ref.run_id, ref },
          TIMERS.workerLost,
        );
      }
    },
    attached: (refs) => {
      for (const ref of refs) {
        core.timers.delete(attemptKey(ref), TIMERS.workerLost);
        // A worker already holds it: its outbox row (if a restart left one) is done.
        core.outbox?.drop(attemptKey(ref));
      }
    },
    // A hello lists an attempt the matcher does not hold (after a restart): where it belongs.
    owner: (ref) => {
      const run = core.runs.get(ref.run_id);
      if (run === undefined || !acceptsResult(run.state, ref.activity_id, ref.attempt)) {
        return undefined;
      }
      const scheduled = run.state.activities.get(ref.activity_id)!.scheduled;
      return {
        namespace: run.id.namespace,
        taskQueue: scheduled.task_queue,
        action: scheduled.action,
      };
    },
    // An attempt that waited for a free slot is now with a worker: its timeouts start.
    assigned: (ref) => {
      core.outbox?.placed(attemptKey(ref));
      const run = core.runs.get(ref.run_id);
      const activity = run?.state.activities.get(ref.activity_id);
      if (run === undefined || activity === undefined || activity.result !== undefined) return;
      if (activity.scheduled.attempt !== ref.attempt) return;
      armTimeouts(core, run.id.runId, ref, activity.scheduled, core.now());
    },
  };
  return events;
}

/**
 * The run a worker's result is to be recorded in, its attempt's timeouts and outbox row
 * dropped; undefined when there is nothing to record (the receipt answered), or when the
 * runs are still loading (`report` is called again once they are).
 */
function resultRun<T>(
  core: EngineCore,
  ref: AttemptRef,
  result: T,
  from: ResultContext,
  receipt: ResultReceipt,
  report: (ref: AttemptRef, result: T, from: ResultContext, receipt: ResultReceipt) => void,
): Run | undefined {
  const run = core.runs.get(ref.run_id);
  if (run === undefined && core.recovering !== undefined) {
    // A worker re-attached faster than the runs were loaded: ask again once they are.
    core.recovering
      .then(() => report(ref, result, from, receipt))
      .catch((error: unknown) => receipt.refused(error));
    return undefined;
  }
  // Not running here (ended, or unknown): nothing to record; the matcher acknowledges.
  if (run === undefined || !acceptsResult(run.state, ref.activity_id, ref.attempt)) {
    receipt.recorded();
    return undefined;
  }
  // Only a worker of the attempt's own namespace and task queue may settle it.
  const queue = run.state.activities.get(ref.activity_id)!.scheduled.task_queue;
  if (from.namespace !== run.id.namespace || from.taskQueue !== queue) {
    core.log.warn(
      { run: ref.run_id, session: from.sessionId },
      "result from a worker of another namespace or task queue; dropped",
    );
    receipt.recorded();
    return undefined;
  }
  forgetAttempt(core, attemptKey(ref));
  return run;
}
export function effect(core: EngineCore, run: Run, command: Command): void {
  const runId = run.id.runId;
  switch (command.type) {
    case "ScheduleActivity": {
      const ref = { run_id: runId, activity_id: command.activityId, attempt: command.attempt };
      if (command.dispatchAt <= core.now()) dispatch(core, run, ref);
      else
        core.timers.set(
          attemptKey(ref),
          command.dispatchAt,
          { kind: "dispatch", runId, ref },
          TIMERS.dispatch,
        );
      return;
    }
    case "StartTimer":
      core.timers.set(`run:${runId}:${command.timerId}`, command.fireAt, {
        kind: "run",
        runId,
        timerId: command.timerId,
      });
      return;
    case "CancelActivity": {
      const ref = { run_id: runId, activity_id: command.activityId, attempt: command.attempt };
      core.dispatcher?.release(ref, command.reason);
      forgetAttempt(core, attemptKey(ref));
      return;
    }
    case "CompleteRun":
    case "FailRun":
    case "CancelRun":
    case "StartChild":
      return;
  }
}
/**
 * Sends an attempt on its way: a member of a parallel or collect goes to the outbox (when
 * enabled), anything else is offered at once. A paused run holds it until it resumes.
 */
export function dispatch(core: EngineCore, run: Run, ref: AttemptRef): void {
  const activity = run.state.activities.get(ref.activity_id);
  if (
    activity === undefined ||
    activity.result !== undefined ||
    activity.scheduled.attempt !== ref.attempt ||
    !isLive(run.state)
  )
    return;
  if (activity.scheduled.member === true && core.outbox !== undefined) {
    core.outbox.add({
      key: attemptKey(ref),
      namespace: run.id.namespace,
      runId: ref.run_id,
      activityId: ref.activity_id,
      attempt: ref.attempt,
      owner: run,
    });
    return;
  }
  if (run.state.status === "Paused") {
    run.held.push(ref);
    return;
  }
  offer(core, run, ref);
}
/** The outbox hands a claimed row off: placed with a worker, queued for a slot, or gone. */
export function handOff(
  core: EngineCore,
  entry: OutboxEntry<Run>,
): "placed" | "queued" | "dropped" {
  const outcome = offer(core, entry.owner, {
    run_id: entry.runId,
    activity_id: entry.activityId,
    attempt: entry.attempt,
  });
  return outcome === "dispatched" ? "placed" : outcome;
}
/** Offers the current attempt of an activity and arms its timeouts. */
export function offer(
  core: EngineCore,
  run: Run,
  ref: AttemptRef,
): "dispatched" | "queued" | "dropped" {
  const activity = run.state.activities.get(ref.activity_id);
  if (
    activity === undefined ||
    activity.result !== undefined ||
    activity.scheduled.attempt !== ref.attempt ||
    !isLive(run.state)
  )
    return "dropped";
  const s = activity.scheduled;
  let outcome: "dispatched" | "queued" = "queued";
  const now = core.now();
  try {
    outcome =
      core.dispatcher?.offer({
        ref,
        namespace: run.id.namespace,
        taskQueue: s.task_queue,
        workflowId: run.id.workflowId,
        action: s.action,
        inputJson: s.input_json,
        startToCloseMs: s.start_to_close_ms,
        heartbeatMs: s.heartbeat_ms,
      }) ?? "queued";
  } catch (error) {
    if (!(error instanceof SkeinError)) throw error;
    if (error.code !== "attempt_already_dispatched") {
      // The queue is full: the attempt fails now and is retried by its policy.
      enqueueInternal(core, run, {
        type: "ActivityFailed",
        at: now,
        activity_id: ref.activity_id,
        attempt: ref.attempt,
        code: error.code,
        message: error.message,
        non_retryable: false,
      });
      return "dropped";
    }
    // Already with the matcher (a worker re-attached it): nothing more to hand off.
    outcome = "dispatched";
  }
  // The timeouts run from when a worker holds the attempt: one still waiting for a free
  // slot (queued at the matcher) is armed when the matcher assigns it (`assigned`).
  if (outcome === "dispatched") armTimeouts(core, run.id.runId, ref, s, now);
  return outcome;
}
/** Arms an attempt's start-to-close and heartbeat timeouts from `now`. */
export function armTimeouts(
  core: EngineCore,
  runId: string,
  ref: AttemptRef,
  s: EventOf<"ActivityScheduled">,
  now: number,
): void {
  const key = attemptKey(ref);
  if (s.start_to_close_ms > 0) {
    core.timers.set(
      key,
      now + s.start_to_close_ms,
      { kind: "start_to_close", runId, ref },
      TIMERS.startToClose,
    );
  }
  if (s.heartbeat_ms > 0) {
    core.beats.set(key, now);
    core.timers.set(
      key,
      now + s.heartbeat_ms,
      { kind: "heartbeat", runId, ref, ms: s.heartbeat_ms },
      TIMERS.heartbeat,
    );
  }
}
/** Drops an attempt's heartbeat record, timeout timers and outbox row. */
export function forgetAttempt(core: EngineCore, key: string): void {
  core.outbox?.drop(key);
  core.beats.delete(key);
  core.timers.delete(key, TIMERS.startToClose);
  core.timers.delete(key, TIMERS.heartbeat);
  core.timers.delete(key, TIMERS.workerLost);
}
export function onTimer(core: EngineCore, payload: TimerPayload): void {
  const run = core.runs.get(payload.runId);
  if (run === undefined) return;
  switch (payload.kind) {
    case "dispatch":
      dispatch(core, run, payload.ref);
      return;
    case "run":
      enqueueInternal(core, run, {
        type: "TimerFired",
        at: core.now(),
        timer_id: payload.timerId,
      });
      return;
    case "start_to_close":
    case "heartbeat":
    case "worker_lost": {
      const { ref } = payload;
      if (!acceptsResult(run.state, ref.activity_id, ref.attempt)) return;
      const key = attemptKey(ref);
      if (payload.kind === "heartbeat") {
        const due = (core.beats.get(key) ?? 0) + payload.ms;
        if (due > core.now()) {
          core.timers.set(key, due, payload, TIMERS.heartbeat);
          return;
        }
      }
      forgetAttempt(core, key);
      core.dispatcher?.release(
        ref,
        payload.kind === "worker_lost" ? "worker lost" : `${payload.kind} timeout`,
      );
      enqueueInternal(core, run, {
        type: "ActivityTimedOut",
        at: core.now(),
        activity_id: ref.activity_id,
        attempt: ref.attempt,
        timeout: payload.kind,
      });
      return;
    }
  }
}
