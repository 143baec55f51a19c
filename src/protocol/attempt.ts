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

/** The ref `attemptKey` was last asked about, and its key. */
let lastRef: AttemptRef | undefined;
let lastKey = "";

/**
 * The key of an attempt in maps: `run_id/activity_id/attempt`. A result passes through the
 * matcher, the metrics and the engine with one ref object, each asking its key: the last one
 * is remembered by identity, so they share one string, flattened and hashed by the first map
 * that reads it (a key built anew costs a flatten and a hash at every map it meets). A ref is
 * never changed once made (its fields are readonly), so a remembered key cannot go stale.
 */
export function attemptKey(ref: AttemptRef): string {
  if (ref === lastRef) return lastKey;
  lastKey = `${ref.run_id}/${ref.activity_id}/${ref.attempt}`;
  lastRef = ref;
  return lastKey;
}
