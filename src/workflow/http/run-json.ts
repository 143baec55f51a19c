/**
 * How the workflow endpoints write runs, events, pending activities and control outcomes as
 * JSON: times as RFC 3339 strings, and stored JSON text (run output, event payloads) parsed
 * losslessly so the reply serializer writes numbers back exactly as they were stored.
 */

import { parseJson } from "../../common/decode/index.ts";
import { isoTime } from "../../common/iso-time.ts";
import type { HistoryEvent } from "../engine/history.ts";
import type { WorkerSession } from "../matching/matcher.ts";
import type { RunRecord } from "../persistence/workflows.ts";
import type { PendingActivity } from "../runs/pending.ts";
import type { ControlDone } from "../runs/service.ts";
import { queueWorkers, type TaskQueueReader } from "./task-queues.ts";

/**
 * Stored JSON text as a value for the reply: parsed losslessly, so the reply serializer
 * writes numbers back exactly as stored (`JSON.rawJSON` takes primitives only).
 */
const rawJSON = (text: string): unknown => parseJson(text);

export function runJson(run: RunRecord) {
  return {
    namespace: run.namespace,
    workflow_id: run.workflowId,
    run_id: run.runId,
    definition_version: run.definitionVersion,
    definition_name: run.definitionName,
    status: run.status,
    started_at: isoTime(run.startedAt),
    updated_at: isoTime(run.updatedAt),
    ended_at: run.endedAt === null ? null : isoTime(run.endedAt),
    output: run.outputJson === null ? null : rawJSON(run.outputJson),
    failure: run.failure,
  };
}

/**
 * `runJson(run)` as JSON text, written directly: the same fields in the same order as the
 * reply serializer writes them, with the stored output spliced in as it is stored (the
 * engine writes it with `JSON.stringify`, so parsing it losslessly and writing it back gives
 * the same text). A long-poll describe answers once per run, and this skips the output's
 * parse and the serializer's replacer over every value (about 1 µs a describe).
 */
export function runText(run: RunRecord): string {
  return (
    `{"namespace":${JSON.stringify(run.namespace)},"workflow_id":${JSON.stringify(run.workflowId)},` +
    `"run_id":${JSON.stringify(run.runId)},"definition_version":${JSON.stringify(run.definitionVersion)},` +
    `"definition_name":${JSON.stringify(run.definitionName)},"status":"${run.status}",` +
    `"started_at":"${isoTime(run.startedAt)}","updated_at":"${isoTime(run.updatedAt)}",` +
    `"ended_at":${run.endedAt === null ? "null" : `"${isoTime(run.endedAt)}"`},` +
    `"output":${run.outputJson ?? "null"},"failure":${JSON.stringify(run.failure)}}`
  );
}

/** An event as stored, with each `*_json` text field written as the JSON value it holds. */
export function eventJson(event: HistoryEvent): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) {
    if (key.endsWith("_json") && typeof value === "string") out[key.slice(0, -5)] = rawJSON(value);
    else out[key] = value;
  }
  return out;
}

/**
 * Pending activities as describe shows them: `state` is `running` (a worker holds the
 * attempt), `backing_off` (a retry waiting for `next_retry_at`) or `waiting` (offered, no
 * worker has it); `workers_serving` counts the connected workers of its queue that serve
 * its action: 0 is the usual answer to "why is my run stuck?".
 */
export function pendingJson(
  run: RunRecord,
  pending: readonly PendingActivity[],
  queues: TaskQueueReader | undefined,
) {
  const now = Date.now();
  const held = new Set(
    (queues?.liveAttempts(run.runId) ?? []).map((a) => `${a.ref.activity_id}/${a.ref.attempt}`),
  );
  // Each queue's workers are read once: a run's pending activities mostly share a queue, and
  // every read builds the whole list of the matcher's sessions.
  const byQueue = new Map<string, readonly WorkerSession[]>();
  const workersOf = (taskQueue: string) => {
    let workers = byQueue.get(taskQueue);
    if (workers === undefined) {
      workers = queues === undefined ? [] : queueWorkers(queues, run.namespace, taskQueue);
      byQueue.set(taskQueue, workers);
    }
    return workers;
  };
  return pending.map((p) => {
    const serving = workersOf(p.taskQueue).filter((w) =>
      w.actions.some((a) => a.action === p.action),
    );
    const state = held.has(`${p.activityId}/${p.attempt}`)
      ? "running"
      : p.dispatchAt > now
        ? "backing_off"
        : "waiting";
    return {
      activity_id: p.activityId,
      step_id: p.stepId,
      action: p.action,
      task_queue: p.taskQueue,
      attempt: p.attempt,
      state,
      scheduled_at: isoTime(p.scheduledAt),
      next_retry_at: p.dispatchAt > now ? isoTime(p.dispatchAt) : null,
      last_failure:
        p.lastFailure === undefined
          ? null
          : {
              attempt: p.lastFailure.attempt,
              at: isoTime(p.lastFailure.at),
              code: p.lastFailure.code,
              message: p.lastFailure.message,
            },
      workers_serving: serving.length,
    };
  });
}

export function controlJson(done: ControlDone) {
  return {
    workflow_id: done.workflowId,
    run_id: done.runId,
    applied: done.applied,
    status: done.status,
  };
}
