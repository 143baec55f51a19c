/**
 * What the engine needs from persistence, and nothing more: commit a batch of new history
 * events for many runs in one transaction (the group commit of an engine tick), and, at
 * start-up, read back every run that has not ended and every outbox row not yet handed off.
 * The outbox rows (members of `parallel` and `collect` waiting for, or holding, a claim) are
 * written in the same transaction as the events that create them. The server implements this over its
 * persistence layer (SQLite or PostgreSQL); the engine never sees SQL.
 */

import type { HistoryEvent, RunStatus } from "./history.ts";

export interface RunIdentity {
  readonly runId: string;
  readonly workflowId: string;
  readonly namespace: string;
  /** The pinned definition version (`sha256:…`). */
  readonly definitionVersion: string;
}

/** Where an outbox row is: waiting for a claim, claimed by the dispatcher, handed off. */
export type OutboxState = "pending" | "claimed" | "done";

/** An outbox row's new state; a row is keyed by (run, activity, attempt). */
export interface OutboxWrite {
  readonly activityId: number;
  readonly attempt: number;
  readonly state: OutboxState;
}

export interface OutboxRow extends OutboxWrite {
  readonly runId: string;
  readonly namespace: string;
}

export interface RunAppend extends RunIdentity {
  /** New events, in order, continuing the run's history (may be empty: outbox writes only). */
  readonly events: readonly HistoryEvent[];
  /** The run's status after these events. */
  readonly status: RunStatus;
  /**
   * Outbox rows to insert or update, in order (a later write to the same row wins), in the
   * same transaction as `events`.
   */
  readonly outbox?: readonly OutboxWrite[];
}

export interface StoredRun extends RunIdentity {
  readonly history: readonly HistoryEvent[];
}

export interface EngineStore {
  /** Appends every run's events in one transaction; resolves once it is durable. */
  commit(batch: readonly RunAppend[]): Promise<void>;
  /** Every run that has not ended (status Running or Paused), with its whole history. */
  loadRunning(): Promise<StoredRun[]>;
  /** Every outbox row whose state is not `done` (pending or claimed). */
  loadOutbox(): Promise<OutboxRow[]>;
}
