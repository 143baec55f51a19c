/**
 * The engine's dispatch port: what the engine asks of whoever hands its attempts to workers
 * (`Dispatcher`: offer, release, flush, live attempts) and what that party reports back
 * (`MatcherEvents`: results, heartbeats, detach and re-attach). The engine owns these types;
 * the matcher implements `Dispatcher` and calls `MatcherEvents`, so the engine never imports
 * the matcher.
 */

import type { AttemptRef } from "../../protocol/attempt.ts";

/** An attempt offered for dispatch. Durations are milliseconds; 0 means no such timeout. */
export interface TaskOffer {
  readonly ref: AttemptRef;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly workflowId: string;
  readonly action: string;
  readonly inputJson: string;
  readonly startToCloseMs: number;
  readonly heartbeatMs: number;
}

/** Where a result came from. */
export interface ResultContext {
  readonly namespace: string;
  readonly taskQueue: string;
  readonly workerName: string;
  readonly sessionId: string;
}

/** The namespace, task queue and action of a current attempt, as the engine knows them. */
export interface AttemptOwner {
  readonly namespace: string;
  readonly taskQueue: string;
  readonly action: string;
}

export interface ActivityFailure {
  readonly code: string;
  readonly message: string;
  readonly nonRetryable: boolean;
}

/**
 * The answer to a reported result: `recorded` once it is durable in history, or at once when
 * there is nothing to record (a resend, a late attempt, a run that ended): the matcher then
 * acknowledges it to the worker. `refused` when it cannot be recorded: the matcher ends the
 * session so the worker resends the result to a healthier server. One of them is called, once.
 *
 * Why not a returned promise: a promise, its two resolvers and the matcher's two callbacks
 * and derived promise came to about 500 bytes per result; the matcher's receipt is one
 * object (docs/engine.md, "Tenth session").
 */
export interface ResultReceipt {
  recorded(): void;
  refused(error: unknown): void;
}

/** A receipt's answer as a promise, for a caller that awaits it (the cluster relay, tests). */
export function answerOf(report: (receipt: ResultReceipt) => void): Promise<void> {
  return new Promise((recorded, refused) => {
    report({ recorded: () => recorded(), refused });
  });
}

/**
 * What the matcher reports. `completed` and `failed` answer through `receipt` (above); one
 * that never answers leaves the result unacknowledged, so the worker keeps it and sends it
 * again after a reconnect (`bench:dispatch` once measured 17% fewer attempts a second so).
 */
export interface MatcherEvents {
  /**
   * `offeredAt` is when the matcher was offered the attempt (`performance.now()`), for the
   * activity latency metric; NaN for one it did not offer (re-attached after a restart).
   */
  completed(
    ref: AttemptRef,
    outputJson: string,
    ctx: ResultContext,
    receipt: ResultReceipt,
    offeredAt?: number,
  ): void;
  failed(
    ref: AttemptRef,
    failure: ActivityFailure,
    ctx: ResultContext,
    receipt: ResultReceipt,
    offeredAt?: number,
  ): void;
  heartbeat?(ref: AttemptRef, detailsJson: string, ctx: ResultContext): void;
  /** A session ended while these attempts were assigned to it. */
  detached?(refs: readonly AttemptRef[], ctx: ResultContext): void;
  /** A reconnecting worker declared it still holds these attempts. */
  attached?(refs: readonly AttemptRef[], ctx: ResultContext): void;
  /**
   * Where a current attempt belongs, for a hello that lists one the matcher does not hold
   * (after a server restart); undefined when it is not a current attempt. Without it such
   * attempts are re-attached on the hello's word (bounded by the session's concurrency).
   */
  owner?(ref: AttemptRef): AttemptOwner | undefined;
  /** An attempt that waited in a backlog was handed to a worker (the outbox frees its claim). */
  assigned?(ref: AttemptRef): void;
}

export type OfferOutcome = "dispatched" | "queued";

/** The matcher operations the engine uses; `Matcher` satisfies it. */
export interface Dispatcher {
  offer(task: TaskOffer): OfferOutcome;
  /** Gives up an attempt: withdrawn if waiting, told to stop if running. */
  release(ref: AttemptRef, reason: string): void;
  /**
   * Takes back an attempt still waiting for a worker (true: it is forgotten, as if never
   * offered); false when a worker may hold it, or it is not here. Never stops a running one.
   */
  withdraw?(ref: AttemptRef): boolean;
  /** Writes frames queued for workers now, rather than at the end of the turn. */
  flush?(): void;
  /** Attempts of a run a live worker holds now (a cancelled run stops every one of them). */
  liveAttempts?(runId: string): readonly { readonly ref: AttemptRef }[];
}
