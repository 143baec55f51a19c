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
  type Decoder,
  finiteNumber,
  map,
  oneOf,
  optional,
  string,
  tagged,
  u32,
} from "../../common/decode/index.ts";

const at = finiteNumber({ min: 0 });
const json = string({ expected: "JSON text" });
const ms = finiteNumber({ min: 0 });

const taggedEvent = tagged("type", {
  RunStarted: {
    at,
    workflow_id: string(),
    definition_version: string(),
    input_json: json,
    /** Set on a child run: the run whose `child` step started it (cancellation cascades). */
    parent_run_id: optional(string()),
    /** A deadline given at start; it overrides the definition's `deadline_ms`. */
    deadline_ms: optional(ms),
  },
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
    /** A member of a `parallel` or `collect`: dispatched through the outbox. */
    member: optional(boolean()),
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
    /**
     * `worker_lost`: its worker's stream ended and it was not re-attached in time.
     * `owner_lost`: its run's shard was taken over by another node, which runs the activity
     * again as the next attempt (the old one may have run, or still run, where it was sent).
     */
    timeout: oneOf(["start_to_close", "heartbeat", "worker_lost", "owner_lost"]),
  },
  TimerStarted: { at, timer_id: string(), fire_at: at },
  TimerFired: { at, timer_id: string() },
  ChildStarted: {
    at,
    /** The step instance (`collect[2].body` inside a collect) that awaits the child. */
    step_id: string(),
    child_run_id: string(),
    workflow: string(),
    definition_version: string(),
    input_json: json,
  },
  ChildEnded: {
    at,
    child_run_id: string(),
    status: oneOf(["Completed", "Failed", "Cancelled"]),
    /** The child's output (Completed), or null. */
    output_json: json,
    /** Why it failed or was cancelled (empty when Completed). */
    message: string(),
  },
  SignalReceived: { at, signal: string(), payload_json: json },
  RunPaused: { at },
  RunResumed: { at },
  RunCompleted: { at, output_json: json },
  RunFailed: { at, code: string(), message: string() },
  RunCancelled: { at, reason: oneOf(["requested", "deadline"]) },
});

// Fields the decoder may leave undefined are optional keys, so events written before a field
// existed (and events that do not need it) are built without it.
type Loose<E> = E extends unknown
  ? { [K in keyof E as undefined extends E[K] ? K : never]?: E[K] } & {
      [K in keyof E as undefined extends E[K] ? never : K]: E[K];
    }
  : never;
export type HistoryEvent = Loose<Decoded<typeof taggedEvent>>;

/** Decodes a stored event; optional fields it lacks stay absent (not `undefined` keys). */
export const historyEvent: Decoder<HistoryEvent> = map(taggedEvent, (event) => {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) if (value !== undefined) out[key] = value;
  return out as HistoryEvent;
});
export type EventType = HistoryEvent["type"];
export type EventOf<T extends EventType> = Extract<HistoryEvent, { type: T }>;

/** `Paused` has not ended: a store loads it with the Running runs after a restart. */
export type RunStatus = "Running" | "Paused" | "Completed" | "Failed" | "Cancelled";
