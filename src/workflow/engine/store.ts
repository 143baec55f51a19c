/**
 * What the engine needs from persistence, and nothing more: commit a batch of new history
 * events for many runs in one transaction (the group commit of an engine tick), and, at
 * start-up, read back every run that has not ended. The server implements this over its
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

export interface RunAppend extends RunIdentity {
  /** New events, in order, continuing the run's history. */
  readonly events: readonly HistoryEvent[];
  /** The run's status after these events. */
  readonly status: RunStatus;
}

export interface StoredRun extends RunIdentity {
  readonly history: readonly HistoryEvent[];
}

export interface EngineStore {
  /** Appends every run's events in one transaction; resolves once it is durable. */
  commit(batch: readonly RunAppend[]): Promise<void>;
  /** Every run whose status is Running, with its whole history. */
  loadRunning(): Promise<StoredRun[]>;
}
