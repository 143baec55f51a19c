/**
 * "Why is my run stuck?": the activities of a live run that have not finished, folded from
 * its durable history, each with its latest attempt, when that attempt may be dispatched
 * (a retry waits out its backoff) and the last failure of an earlier attempt. The history,
 * not the engine's memory, is the source, so the answer is the same on any node and after a
 * restart; the HTTP layer adds what only the matcher knows (is a worker running it, does any
 * worker serve its queue).
 */

import type { EventOf, HistoryEvent } from "../engine/history.ts";

/** How an earlier attempt ended (a timeout has the code `timed_out`). */
export interface AttemptFailure {
  readonly attempt: number;
  readonly at: number;
  readonly code: string;
  readonly message: string;
}

export interface PendingActivity {
  readonly activityId: number;
  readonly stepId: string;
  readonly action: string;
  readonly taskQueue: string;
  readonly attempt: number;
  readonly scheduledAt: number;
  /** Not offered to workers before this time (a retry's backoff). */
  readonly dispatchAt: number;
  readonly lastFailure: AttemptFailure | undefined;
}

/** At most this many pending activities are listed (a wide `collect` has thousands). */
export const PENDING_LISTED_MAX = 100;

interface Slot {
  scheduled: EventOf<"ActivityScheduled">;
  finished: boolean;
  lastFailure: AttemptFailure | undefined;
}

/** The unfinished activities of a history, by activity id; empty once the run ended. */
export function pendingActivities(history: readonly HistoryEvent[]): PendingActivity[] {
  const slots = new Map<number, Slot>();
  for (const event of history) {
    switch (event.type) {
      case "ActivityScheduled": {
        const prior = slots.get(event.activity_id);
        slots.set(event.activity_id, {
          scheduled: event,
          finished: false,
          lastFailure: prior?.lastFailure,
        });
        break;
      }
      case "ActivityCompleted":
        finish(slots, event, undefined);
        break;
      case "ActivityFailed":
        finish(slots, event, {
          attempt: event.attempt,
          at: event.at,
          code: event.code,
          message: event.message,
        });
        break;
      case "ActivityTimedOut":
        finish(slots, event, {
          attempt: event.attempt,
          at: event.at,
          code: "timed_out",
          message: `attempt timed out (${event.timeout})`,
        });
        break;
      case "RunCompleted":
      case "RunFailed":
      case "RunCancelled":
        return [];
      default:
        break;
    }
  }
  const out: PendingActivity[] = [];
  for (const [activityId, slot] of slots) {
    if (slot.finished) continue;
    const s = slot.scheduled;
    out.push({
      activityId,
      stepId: s.step_id,
      action: s.action,
      taskQueue: s.task_queue,
      attempt: s.attempt,
      scheduledAt: s.at,
      dispatchAt: s.dispatch_at,
      lastFailure: slot.lastFailure,
    });
  }
  return out.sort((a, b) => a.activityId - b.activityId);
}

function finish(
  slots: Map<number, Slot>,
  event: { activity_id: number; attempt: number },
  failure: AttemptFailure | undefined,
): void {
  const slot = slots.get(event.activity_id);
  if (slot === undefined || slot.scheduled.attempt !== event.attempt) return;
  slot.finished = true;
  if (failure !== undefined) slot.lastFailure = failure;
}
