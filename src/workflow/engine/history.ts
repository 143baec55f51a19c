/**
 * A run's durable history: the typed events, in order, that are the only truth about a run.
 * The engine never keeps state that history cannot rebuild, so a server killed at any moment
 * resumes every run by reading its events back. JSON payloads (inputs, outputs) are kept as
 * JSON text, exactly as they arrived, so numbers survive and a payload goes to a worker
 * without being re-encoded. `historyEvent` decodes a stored event at the persistence edge.
 * Times are milliseconds since the Unix epoch.
 */

import {
  boolean,
  type Decoded,
  finiteNumber,
  oneOf,
  string,
  tagged,
  u32,
} from "../../common/decode/index.ts";

const at = finiteNumber({ min: 0 });
const json = string({ expected: "JSON text" });
const ms = finiteNumber({ min: 0 });

export const historyEvent = tagged("type", {
  RunStarted: { at, workflow_id: string(), definition_version: string(), input_json: json },
  ActivityScheduled: {
    at,
    activity_id: u32({ min: 1 }),
    attempt: u32({ min: 1 }),
    step_id: string(),
    action: string(),
    task_queue: string(),
    input_json: json,
    /** Not offered to workers before this time (the retry backoff). */
    dispatch_at: at,
    start_to_close_ms: ms,
    heartbeat_ms: ms,
  },
  ActivityCompleted: {
    at,
    activity_id: u32({ min: 1 }),
    attempt: u32({ min: 1 }),
    output_json: json,
  },
  ActivityFailed: {
    at,
    activity_id: u32({ min: 1 }),
    attempt: u32({ min: 1 }),
    code: string(),
    message: string(),
    non_retryable: boolean(),
  },
  ActivityTimedOut: {
    at,
    activity_id: u32({ min: 1 }),
    attempt: u32({ min: 1 }),
    /** `worker_lost`: its worker's stream ended and it was not re-attached in time. */
    timeout: oneOf(["start_to_close", "heartbeat", "worker_lost"]),
  },
  TimerStarted: { at, timer_id: string(), fire_at: at },
  TimerFired: { at, timer_id: string() },
  RunCompleted: { at, output_json: json },
  RunFailed: { at, code: string(), message: string() },
  RunCancelled: { at, reason: oneOf(["requested", "deadline"]) },
});

export type HistoryEvent = Decoded<typeof historyEvent>;
export type EventType = HistoryEvent["type"];
export type EventOf<T extends EventType> = Extract<HistoryEvent, { type: T }>;

export type RunStatus = "Running" | "Completed" | "Failed" | "Cancelled";
