/**
 * One activity attempt, as every role names it: the run, the activity's position in it, the
 * attempt from 1. The worker stream, the agent transport, the engine and the transcript rows
 * all carry this one shape; `attemptKey` is its key in maps and logs.
 */

/** One activity attempt: the run, the activity's position in it, the attempt from 1. */
export interface AttemptRef {
  readonly run_id: string;
  readonly activity_id: number;
  readonly attempt: number;
}

/** The key of an attempt in maps: `run_id/activity_id/attempt`. */
export function attemptKey(ref: AttemptRef): string {
  return `${ref.run_id}/${ref.activity_id}/${ref.attempt}`;
}
