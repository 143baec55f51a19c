/**
 * Exponential backoff, shared by the worker's reconnect loops, the supervisor and the engine's
 * retry policy: the n-th wait (from 1) is `initial × coefficient^(n-1)`, capped at `max`.
 * `backoffDelay` is deterministic (retry schedules that history records must be). Reconnect
 * loops use `jitteredDelay` instead: after a server restart every worker loses its stream at
 * the same instant, and identical waits would bring them all back in lockstep, retry after
 * retry. "Equal jitter" keeps at least half of the deterministic wait (so the backoff still
 * grows and a down server is not hammered) and spreads the other half uniformly.
 */

export interface BackoffPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
  /** Growth per step; 2 doubles each wait. */
  readonly coefficient?: number;
}

/** The wait before retry number `n` (1 for the first retry), in milliseconds. */
export function backoffDelay(policy: BackoffPolicy, n: number): number {
  const coefficient = policy.coefficient ?? 2;
  const raw = policy.initialMs * coefficient ** Math.max(0, n - 1);
  return Math.min(policy.maxMs, Number.isFinite(raw) ? raw : policy.maxMs);
}

/**
 * The wait before reconnect number `n`, jittered: uniform in [d/2, d] where d is
 * `backoffDelay(policy, n)`, so never above `maxMs`. `random` returns a number in [0, 1)
 * (Math.random unless a caller pins it).
 */
export function jitteredDelay(
  policy: BackoffPolicy,
  n: number,
  random: () => number = Math.random,
): number {
  const d = backoffDelay(policy, n);
  return Math.round(d / 2 + random() * (d / 2));
}
