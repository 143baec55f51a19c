/**
 * Runs and their histories on SQLite, and the engine's group commit: `commit` writes the
 * events of every run that advanced in one tick, and each run's row (status, times, end), in
 * one `BEGIN IMMEDIATE` transaction; the database is in WAL mode with `synchronous = FULL`,
 * so the commit is durable when it returns and there is exactly one sync per engine commit.
 * Each run's next event position is kept in memory (filled by `loadRunning` and by commits)
 * so an append never reads first; a run not in memory reads its row once.
 * Stored events are decoded with the history decoder when read back.
 */

import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { HistoryEvent } from "../../engine/history.ts";
import type { OutboxRow, RunAppend, StoredRun } from "../../engine/store.ts";
import {
  decodeStoredEvent,
  endOf,
  isLive,
  listRunsSql,
  MAX_LISTED_VERSIONS,
  OPEN_OUTBOX_SQL,
  type OutboxTableRow,
  RUN_COLUMNS,
  type RunRow,
  runPage,
  toOutboxRow,
  toRunRecord,
} from "../run-rows.ts";
import type { HistoryRange, RunPage, RunQuery, RunRecord, RunStore } from "../workflows.ts";
import { transaction } from "./database.ts";

export class SqliteRunStore implements RunStore {
  readonly #db: DatabaseSync;
  readonly #nextSeq = new Map<string, number>();
  readonly #insertEvent: StatementSync;
  readonly #insertRun: StatementSync;
  readonly #updateRun: StatementSync;
  readonly #endRun: StatementSync;
  readonly #seqOf: StatementSync;
  readonly #running: StatementSync;
  readonly #events: StatementSync;
  readonly #eventRange: StatementSync;
  readonly #byWorkflowId: StatementSync;
  readonly #exists: StatementSync;
  readonly #versions: StatementSync;
  /** List statements by their SQL text: one per combination of filters, prepared once. */
  readonly #pages = new Map<string, StatementSync>();
  readonly #writeOutbox: StatementSync;
  readonly #openOutbox: StatementSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#insertEvent = db.prepare(
      "INSERT INTO workflow_events (run_id, seq, event) VALUES (?, ?, ?)",
    );
    this.#insertRun = db.prepare(
      `INSERT INTO workflow_runs (run_id, namespace, workflow_id, definition_version, status,
         started_at, updated_at, next_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#updateRun = db.prepare(
      "UPDATE workflow_runs SET status = ?, updated_at = ?, next_seq = ? WHERE run_id = ?",
    );
    this.#endRun = db.prepare(
      `UPDATE workflow_runs SET status = ?, updated_at = ?, next_seq = ?, ended_at = ?,
         output_json = ?, failure_code = ?, failure_message = ? WHERE run_id = ?`,
    );
    this.#seqOf = db.prepare("SELECT next_seq FROM workflow_runs WHERE run_id = ?");
    this.#writeOutbox = db.prepare(
      `INSERT INTO workflow_outbox (run_id, activity_id, attempt, namespace, state)
         VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (run_id, activity_id, attempt) DO UPDATE SET state = excluded.state`,
    );
    this.#openOutbox = db.prepare(OPEN_OUTBOX_SQL);
    this.#running = db.prepare(
      "SELECT run_id, workflow_id, namespace, definition_version FROM workflow_runs " +
        "WHERE status IN ('Running', 'Paused')",
    );
    this.#events = db.prepare("SELECT event FROM workflow_events WHERE run_id = ? ORDER BY seq");
    // seq is the event's index in the run (appends count it from 0), so a range is a seq range.
    this.#eventRange = db.prepare(
      "SELECT event FROM workflow_events WHERE run_id = ? AND seq >= ? ORDER BY seq LIMIT ?",
    );
    this.#byWorkflowId = db.prepare(
      `SELECT ${RUN_COLUMNS} FROM workflow_runs WHERE namespace = ? AND workflow_id = ?`,
    );
    this.#exists = db.prepare("SELECT 1 AS one FROM workflow_runs WHERE run_id = ?");
    this.#versions = db.prepare(
      "SELECT version FROM workflow_definitions WHERE namespace = ? AND name = ?",
    );
  }

  async commit(batch: readonly RunAppend[]): Promise<void> {
    const positions = new Map<string, number>();
    transaction(this.#db, () => {
      for (const r of batch) {
        // Outbox rows go in the same transaction as the events that create them.
        for (const o of r.outbox ?? []) {
          this.#writeOutbox.run(r.runId, o.activityId, o.attempt, r.namespace, o.state);
        }
        if (r.events.length === 0) continue;
        let seq = positions.get(r.runId) ?? this.#nextSeq.get(r.runId);
        const at = r.events.at(-1)!.at;
        if (seq === undefined) {
          // A batch that starts the run needs no look-up: the run is new.
          const row =
            r.events[0]!.type === "RunStarted"
              ? undefined
              : (this.#seqOf.get(r.runId) as { next_seq: number } | undefined);
          if (row === undefined) {
            seq = 0;
            this.#insertRun.run(
              r.runId,
              r.namespace,
              r.workflowId,
              r.definitionVersion,
              r.status,
              r.events[0]!.at,
              at,
              0,
            );
          } else {
            seq = row.next_seq;
          }
        }
        for (const e of r.events) this.#insertEvent.run(r.runId, seq++, JSON.stringify(e));
        positions.set(r.runId, seq);
        const end = isLive(r.status) ? undefined : endOf(r.events);
        if (end === undefined) this.#updateRun.run(r.status, at, seq, r.runId);
        else {
          this.#endRun.run(
            r.status,
            at,
            seq,
            end.at,
            end.output,
            end.failure?.[0] ?? null,
            end.failure?.[1] ?? null,
            r.runId,
          );
        }
      }
    });
    // Positions are remembered only once durable: a failed commit leaves none behind.
    for (const r of batch) {
      const seq = positions.get(r.runId);
      if (seq === undefined) continue;
      if (isLive(r.status)) this.#nextSeq.set(r.runId, seq);
      else this.#nextSeq.delete(r.runId);
    }
  }

  async loadOutbox(): Promise<OutboxRow[]> {
    return (this.#openOutbox.all() as unknown as OutboxTableRow[]).map(toOutboxRow);
  }

  async loadRunning(): Promise<StoredRun[]> {
    const rows = this.#running.all() as unknown as {
      run_id: string;
      workflow_id: string;
      namespace: string;
      definition_version: string;
    }[];
    return rows.map((r) => {
      const history = (this.#events.all(r.run_id) as { event: string }[]).map((e) =>
        decodeStoredEvent(e.event),
      );
      this.#nextSeq.set(r.run_id, history.length);
      return {
        runId: r.run_id,
        workflowId: r.workflow_id,
        namespace: r.namespace,
        definitionVersion: r.definition_version,
        history,
      };
    });
  }

  async byWorkflowId(namespace: string, workflowId: string): Promise<RunRecord | undefined> {
    const row = this.#byWorkflowId.get(namespace, workflowId) as unknown as RunRow | undefined;
    return row === undefined ? undefined : toRunRecord(row);
  }

  async list(query: RunQuery): Promise<RunPage> {
    let versions: string[] | undefined;
    if (query.definition !== undefined) {
      const rows = this.#versions.all(query.namespace, query.definition) as { version: string }[];
      if (rows.length === 0) return { runs: [], next: undefined };
      if (rows.length <= MAX_LISTED_VERSIONS) versions = rows.map((r) => r.version);
    }
    const { sql, params } = listRunsSql(query, "sqlite", versions);
    let statement = this.#pages.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#pages.set(sql, statement);
    }
    return runPage(statement.all(...params) as unknown as RunRow[], query.limit);
  }

  async history(runId: string, range?: HistoryRange): Promise<HistoryEvent[] | undefined> {
    if (this.#exists.get(runId) === undefined) return undefined;
    const rows =
      range === undefined
        ? this.#events.all(runId)
        : this.#eventRange.all(runId, range.after, range.limit);
    return (rows as { event: string }[]).map((e) => decodeStoredEvent(e.event));
  }
}
