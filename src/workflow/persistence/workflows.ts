/**
 * The workflow side of the persistence boundary: definitions registered per namespace and
 * versioned by content hash, and runs with their durable histories. `RunStore` is the
 * engine's `EngineStore` (one transaction per engine commit, for every run that advanced)
 * plus the reads the HTTP API answers from: a run's record, a filtered page of runs, and a
 * run's history in order. Records are written only by engine commits, so a read never shows
 * a state that is not durable.
 */

import type { HistoryEvent, RunStatus } from "../engine/history.ts";
import type { EngineStore } from "../engine/store.ts";

export interface DefinitionRecord {
  readonly namespace: string;
  readonly name: string;
  /** `sha256:<hex>` of the canonical document. */
  readonly version: string;
  /** The canonical JSON text of the document (what the version hashes). */
  readonly canonical: string;
  readonly registeredAt: number;
  readonly registeredBy: string;
}

/** A definition to register: what its record will hold. */
export type NewDefinition = DefinitionRecord;

export interface DefinitionStore {
  /**
   * Records the definition unless this version exists in the namespace; either way it
   * becomes the latest of its name. `created` is false when the version existed.
   */
  register(input: NewDefinition): Promise<{ record: DefinitionRecord; created: boolean }>;
  get(namespace: string, version: string): Promise<DefinitionRecord | undefined>;
  /** The most recently registered version of `name` in the namespace. */
  latest(namespace: string, name: string): Promise<DefinitionRecord | undefined>;
  /** Each name of the namespace with its latest version, ordered by name. */
  list(namespace: string): Promise<DefinitionSummary[]>;
  /** Every version of `name`, the latest registered first (empty when the name is unknown). */
  versions(namespace: string, name: string): Promise<DefinitionRecord[]>;
}

/** A definition name as listed: its latest version and how many versions it has. */
export interface DefinitionSummary {
  readonly name: string;
  readonly version: string;
  readonly registeredAt: number;
  readonly registeredBy: string;
  readonly versions: number;
}

/** A run as the API shows it: identity, pinned version, status, times, end. */
export interface RunRecord {
  readonly namespace: string;
  readonly workflowId: string;
  readonly runId: string;
  readonly definitionVersion: string;
  /** The registered name of the definition version ("" if the version is not registered). */
  readonly definitionName: string;
  readonly status: RunStatus;
  readonly startedAt: number;
  readonly updatedAt: number;
  readonly endedAt: number | null;
  /** The run's output as JSON text (Completed only). */
  readonly outputJson: string | null;
  /** `{code, message}` of a Failed run, `{reason}` of a Cancelled one. */
  readonly failure: { readonly code: string; readonly message: string } | null;
}

export interface RunQuery {
  readonly namespace: string;
  readonly status: RunStatus | undefined;
  /** Runs started from any version of this definition name. */
  readonly definition?: string | undefined;
  /** Runs with `startedAt >= startedAfter` (ms). */
  readonly startedAfter?: number | undefined;
  /** Runs with `startedAt < startedBefore` (ms). */
  readonly startedBefore?: number | undefined;
  readonly limit: number;
  /** Continue after this position (from a previous page's `next`, listed in the same order). */
  readonly after: RunPosition | undefined;
  /** Absent: "oldest". */
  readonly order?: RunOrder | undefined;
}

/**
 * Runs are listed by start time, then run id (a stable order for cursors): ascending
 * ("oldest", first started first) or descending ("newest"), both read along the same indexes.
 */
export type RunOrder = "oldest" | "newest";

export const RUN_ORDERS: readonly RunOrder[] = ["oldest", "newest"];

export interface RunPosition {
  readonly startedAt: number;
  readonly runId: string;
}

export interface RunPage {
  readonly runs: RunRecord[];
  /** Where the next page starts; undefined on the last page. */
  readonly next: RunPosition | undefined;
}

export interface RunStore extends EngineStore {
  /** The run of `workflowId` in the namespace (one run per workflow id). */
  byWorkflowId(namespace: string, workflowId: string): Promise<RunRecord | undefined>;
  list(query: RunQuery): Promise<RunPage>;
  /**
   * The run's events in order; undefined when the run does not exist. With a range, only
   * the events at indexes `after`, `after + 1`, … (at most `limit` of them) are read.
   */
  history(runId: string, range?: HistoryRange): Promise<HistoryEvent[] | undefined>;
}

/** A slice of a history by event index (0-based, the order events were committed). */
export interface HistoryRange {
  /** How many events to skip: the index of the first one read. */
  readonly after: number;
  readonly limit: number;
}

/** What a backend offers to run workflows. */
export interface WorkflowPersistence {
  readonly definitions: DefinitionStore;
  readonly runs: RunStore;
}
