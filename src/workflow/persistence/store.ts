/**
 * The workflow server's persistence boundary: a domain-level interface (namespaces, workflow
 * definitions, runs and their events; outbox rows and deployments as they land) that every backend implements.
 * It is implemented once, in `sql/`, over a row-level driver: SQLite (`sqlite/`) for a single
 * node, PostgreSQL (`postgres/`) for cluster mode. Callers never see SQL, rows or connections.
 *
 * Shape rules every backend and every new method keeps:
 * - Every method is async and each one is a single transaction: when its promise resolves,
 *   the change is durable (committed, WAL synced). Callers answer only after that.
 * - Work that is claimed (outbox rows, timers, tasks) is partitioned into `shards`:
 *   `shardOf(key, total)` places a row, and a claim takes a `ShardScope` (the shards this
 *   node owns, with the fencing token of its ownership) plus a limit. On PostgreSQL a claim
 *   is one `SELECT … WHERE shard = ANY($owned) … FOR UPDATE SKIP LOCKED LIMIT $n` inside the
 *   claiming transaction, so nodes never block on each other's rows; on SQLite it runs
 *   under `BEGIN IMMEDIATE`, which serialises writers of the one node.
 * - Names and ids cross the interface as plain values; records are returned as fresh
 *   objects the caller may keep.
 */

import { createHash } from "node:crypto";
import type { AttemptRef } from "../../protocol/attempt.ts";
import type { EngineStore } from "../engine/store.ts";
import type { ClusterTables } from "./postgres/cluster.ts";
import type { ShardFence } from "./postgres/runs.ts";
import type { WorkflowPersistence } from "./workflows.ts";

/** A namespace's durable record. `maxInFlightActivities` null follows the server config. */
export interface NamespaceRecord {
  readonly name: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  /** The subject of the bearer that created it, or `skein` for start-up creation. */
  readonly createdBy: string;
  readonly maxInFlightActivities: number | null;
}

export interface NewNamespace {
  readonly name: string;
  readonly createdBy: string;
  readonly createdAt: number;
}

/** What a namespace holds: its runs counted by status, and its registered definitions. */
export interface NamespaceUsage {
  /** `[status, count]` for each status with at least one run, ordered by status. */
  readonly runs: readonly (readonly [string, number])[];
  /** Registered definition versions. */
  readonly definitions: number;
}

/** A delete's outcome: refused while the namespace has runs (their history lives there). */
export type NamespaceDeletion =
  | { readonly outcome: "deleted"; readonly record: NamespaceRecord; readonly definitions: number }
  | { readonly outcome: "absent" }
  | { readonly outcome: "has_runs"; readonly runs: number };

export interface NamespaceStore {
  /** Creates the namespace unless it exists; `created` is false when it already existed. */
  create(input: NewNamespace): Promise<{ record: NamespaceRecord; created: boolean }>;
  get(name: string): Promise<NamespaceRecord | undefined>;
  /** Every namespace, ordered by name. */
  list(): Promise<NamespaceRecord[]>;
  usage(name: string): Promise<NamespaceUsage>;
  /**
   * Deletes the namespace and its definitions in one transaction, unless it has runs (any
   * status): then nothing changes and the run count is returned.
   */
  delete(name: string): Promise<NamespaceDeletion>;
}

/** The shards a node owns while it claims work, and the token fencing that ownership. */
export interface ShardScope {
  readonly owned: readonly number[];
  readonly total: number;
  readonly fencingToken: bigint;
}

/** The shard (0..total-1) of a partition key: stable across nodes, versions and restarts. */
export function shardOf(key: string, total: number): number {
  const digest = createHash("sha256").update(key).digest();
  return digest.readUInt32BE(0) % total;
}

// ---- Worker deployments ----------------------------------------------------------------
// A deployment row holds its record as JSON text. The store does not decode it: the
// deployments layer does, so a row written by another build (or by hand) that no longer
// decodes is still listed, separately, with the reason, instead of failing the whole read.

export interface DeploymentRow {
  readonly name: string;
  /** The record as JSON text (see src/workflow/deployments/record.ts). */
  readonly document: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface DeploymentStore {
  get(name: string): Promise<DeploymentRow | undefined>;
  /** Every row, ordered by name. */
  list(): Promise<DeploymentRow[]>;
  /** Inserts or replaces the row; `createdAt` of an existing row is kept. */
  put(name: string, document: string, now: number): Promise<DeploymentRow>;
  /** Removes the row; returns it, or undefined when there was none. */
  delete(name: string): Promise<DeploymentRow | undefined>;
}
// ---- end of worker deployments ------------------------------------------------------------

// ---- Agent transcripts ------------------------------------------------------------------
// One row per transcript entry of an agent attempt, as JSON text, in arrival order.

export interface TranscriptStore {
  /** Appends one entry (JSON text) to the attempt's transcript. */
  append(ref: AttemptRef, entry: string, at: number): Promise<void>;
  /** The attempt's entries (JSON text), oldest first. */
  list(ref: AttemptRef): Promise<string[]>;
  /**
   * The run's attempts that have a transcript (one read, none for a run without agents): a
   * describe reads the transcripts of these only, not one per attempt of the run.
   */
  attempts(runId: string): Promise<TranscribedAttempt[]>;
}

/** An attempt of a run, by its activity and attempt number. */
export interface TranscribedAttempt {
  readonly activity_id: number;
  readonly attempt: number;
}
// ---- end of agent transcripts ---------------------------------------------------------------

/**
 * Cluster mode's storage (PostgreSQL only; see docs/cluster.md): the lease tables, a run
 * store scoped and fenced to one owned shard, the wake-up channel, and where a stored run
 * lives (for routing requests to its shard's owner).
 */
export interface ClusterStorage {
  readonly schema: string;
  tables(ttlMs: number): ClusterTables;
  shardRuns(fence: ShardFence): EngineStore;
  /**
   * LISTENs for the cluster's wake-ups (reconnecting on loss); resolves to a stop function.
   * `topic` is "" for leases and membership, or what `notify` was given.
   */
  listen(wake: (topic: string) => void): Promise<() => Promise<void>>;
  /** Wakes every node of the cluster on `topic` (e.g. "deployments"). */
  notify(topic: string): Promise<void>;
  /** The shard of the stored run of (namespace, workflow id), undefined when there is none. */
  runShard(namespace: string, workflowId: string): Promise<number | undefined>;
  /** The shard of a stored run by run id. */
  runShardById(runId: string): Promise<number | undefined>;
}

export interface WorkflowStore {
  /** Which backend this is, for logs and the start-up banner. */
  readonly backend: string;
  /** The schema version the database is at after start-up migrations. */
  readonly schemaVersion: number;
  readonly namespaces: NamespaceStore;
  readonly deployments: DeploymentStore;
  readonly transcripts: TranscriptStore;
  /** Definitions and runs. */
  readonly workflows: WorkflowPersistence;
  /**
   * Copies the database, online, to a new file at `target` (absolute, must not exist);
   * absent on backends backed up with their own tools (PostgreSQL: pg_dump).
   */
  backup?(target: string): Promise<BackupResult>;
  /** Present on a backend that can hold a cluster (PostgreSQL). */
  readonly cluster?: ClusterStorage;
  /** Closes connections after in-flight transactions finish. */
  close(): Promise<void>;
}

export interface BackupResult {
  readonly path: string;
  readonly bytes: number;
  /** Database pages copied. */
  readonly pages: number;
}
