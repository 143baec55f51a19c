/**
 * Exponential backoff, shared by the worker's reconnect loop and the engine's retry policy:
 * the n-th wait (from 1) is `initial × coefficient^(n-1)`, capped at `max`. Deterministic on
 * purpose: callers that need to spread a herd add their own jitter.
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
