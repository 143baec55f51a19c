/**
 * The row shapes both run stores share (SQLite and PostgreSQL keep the same tables): how a
 * `workflow_runs` row becomes a RunRecord, how stored events are decoded, what a batch's
 * events say about a run's end, and how an outbox row is read. Times are milliseconds;
 * PostgreSQL returns BIGINT columns as strings, SQLite as numbers, so both are accepted.
 */

import { type HistoryEvent, historyEvent, type RunStatus } from "../engine/history.ts";
import type { OutboxRow, OutboxState } from "../engine/store.ts";
import type { RunPage, RunRecord } from "./workflows.ts";

export interface RunRow {
  namespace: string;
  workflow_id: string;
  run_id: string;
  definition_version: string;
  status: string;
  started_at: number | string;
  updated_at: number | string;
  ended_at: number | string | null;
  output_json: string | null;
  failure_code: string | null;
  failure_message: string | null;
}

export const RUN_COLUMNS =
  "namespace, workflow_id, run_id, definition_version, status, started_at, updated_at, " +
  "ended_at, output_json, failure_code, failure_message";

export function toRunRecord(row: RunRow): RunRecord {
  return {
    namespace: row.namespace,
    workflowId: row.workflow_id,
    runId: row.run_id,
    definitionVersion: row.definition_version,
    status: row.status as RunStatus,
    startedAt: Number(row.started_at),
    updatedAt: Number(row.updated_at),
    endedAt: row.ended_at === null ? null : Number(row.ended_at),
    outputJson: row.output_json,
    failure:
      row.failure_code === null
        ? null
        : { code: row.failure_code, message: row.failure_message ?? "" },
  };
}

/** A list page from rows fetched with `limit + 1`: the extra row says a next page exists. */
export function runPage(rows: readonly RunRow[], limit: number): RunPage {
  const runs = rows.slice(0, limit).map(toRunRecord);
  const last = runs.at(-1);
  return {
    runs,
    next:
      rows.length > limit && last !== undefined
        ? { startedAt: last.startedAt, runId: last.runId }
        : undefined,
  };
}

export function decodeStoredEvent(text: string): HistoryEvent {
  return historyEvent.run(JSON.parse(text), undefined);
}

/** A run that has not ended: it keeps its place in memory and is reloaded at start-up. */
export function isLive(status: RunStatus): boolean {
  return status === "Running" || status === "Paused";
}

/** What a batch's events say about the run's end, for its row. */
export function endOf(events: readonly HistoryEvent[]) {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === "RunCompleted") return { at: e.at, output: e.output_json, failure: null };
    if (e.type === "RunFailed") return { at: e.at, output: null, failure: [e.code, e.message] };
    if (e.type === "RunCancelled") {
      return { at: e.at, output: null, failure: ["cancelled", `run cancelled (${e.reason})`] };
    }
  }
  return undefined;
}

export interface OutboxTableRow {
  run_id: string;
  activity_id: number;
  attempt: number;
  namespace: string;
  state: OutboxState;
}

export const OPEN_OUTBOX_SQL =
  "SELECT run_id, activity_id, attempt, namespace, state FROM workflow_outbox " +
  "WHERE state <> 'done' ORDER BY run_id, activity_id, attempt";

export function toOutboxRow(r: OutboxTableRow): OutboxRow {
  return {
    runId: r.run_id,
    namespace: r.namespace,
    activityId: r.activity_id,
    attempt: r.attempt,
    state: r.state,
  };
}
