/**
 * The run rows of both backends (SQLite and PostgreSQL keep the same tables): how a
 * `workflow_runs` row becomes a RunRecord, how a list page is asked for, how stored events are decoded, what a batch's
 * events say about a run's end, and how an outbox row is read. Times are milliseconds;
 * PostgreSQL returns BIGINT columns as strings, SQLite as numbers, so both are accepted.
 */

import { type HistoryEvent, historyEvent, type RunStatus } from "../../engine/history.ts";
import type { OutboxRow, OutboxState } from "../../engine/store.ts";
import type { RunPage, RunPosition, RunQuery, RunRecord } from "../workflows.ts";
import type { Dialect } from "./dialect.ts";

export interface RunRow {
  namespace: string;
  workflow_id: string;
  run_id: string;
  definition_version: string;
  definition_name: string | null;
  status: string;
  started_at: number | string;
  updated_at: number | string;
  ended_at: number | string | null;
  output_json: string | null;
  failure_code: string | null;
  failure_message: string | null;
  /** A live run's last event (its time is the run's `updated_at`); null once it ended. */
  last_event: string | null;
}

/**
 * A run's columns, with its definition's name looked up by the definitions' primary key
 * (namespace, version): a version is one document, so it has exactly one name. A live run's
 * row is not written per step (run-commit.ts), so its `updated_at` is the time of its last
 * event, read by the events' primary key; an ended run's row holds its last event's time.
 */
export const RUN_COLUMNS =
  "namespace, workflow_id, run_id, definition_version, status, started_at, updated_at, " +
  "ended_at, output_json, failure_code, failure_message, " +
  "(SELECT d.name FROM workflow_definitions d WHERE d.namespace = workflow_runs.namespace " +
  "AND d.version = workflow_runs.definition_version) AS definition_name, " +
  "CASE WHEN status IN ('Running', 'Paused') THEN (SELECT e.event FROM workflow_events e " +
  "WHERE e.run_id = workflow_runs.run_id ORDER BY e.seq DESC LIMIT 1) END AS last_event";

/**
 * A list page's statement and parameters for either dialect: only the filters given become
 * conditions, so each shape keeps a plan that walks the (namespace[, status], started_at,
 * run_id) index, forwards for "oldest" and backwards for "newest" (both databases read a
 * B-tree either way, so neither order needs its own index or a sort); one row more than the
 * limit says whether another page follows.
 *
 * Filtered by definition, `versions` (the name's versions, looked up first) makes the page
 * one ordered range of the (namespace, definition_version, started_at, run_id) index per
 * version, each cut at the page's size, merged: a rare definition reads its own runs, not
 * every run the namespace started. Without them (a name with more versions than a
 * statement should hold) the start-time index is walked and each run's version tested.
 */
export function listRunsSql(query: RunQuery, dialect: Dialect, versions?: readonly string[]) {
  const params: (string | number)[] = [];
  const p = (value: string | number) => {
    params.push(value);
    return "?";
  };
  const newest = query.order === "newest";
  const direction = newest ? " DESC" : "";
  const order = `ORDER BY started_at${direction}, run_id${direction}`;
  const byVersion = query.definition !== undefined && versions !== undefined;
  const select = (version?: string) =>
    `SELECT ${RUN_COLUMNS} FROM workflow_runs WHERE ${listConditions(query, p, dialect, version)}`;
  if (!byVersion || versions.length <= 1) {
    const where = select(byVersion ? versions[0] : undefined);
    return { sql: `${where} ${order} LIMIT ${p(query.limit + 1)}`, params };
  }
  const arms = versions.map((v) =>
    dialect.cutsUnionArms ? `(${select(v)} ${order} LIMIT ${p(query.limit + 1)})` : select(v),
  );
  return { sql: `${arms.join(" UNION ALL ")} ${order} LIMIT ${p(query.limit + 1)}`, params };
}

/** The most versions a list by definition reads one range each of; past it, one walk. */
export const MAX_LISTED_VERSIONS = 100;

/** A list's WHERE conditions: `version` given, that version's runs only. */
function listConditions(
  query: RunQuery,
  p: (value: string | number) => string,
  dialect: Dialect,
  version: string | undefined,
): string {
  let where = `namespace = ${p(query.namespace)}`;
  if (version !== undefined) where += ` AND definition_version = ${p(version)}`;
  if (query.status !== undefined) where += ` AND status = ${p(query.status)}`;
  if (query.definition !== undefined && version === undefined) {
    where +=
      " AND definition_version IN (SELECT version FROM workflow_definitions " +
      `WHERE namespace = ${p(query.namespace)} AND name = ${p(query.definition)})`;
  }
  const newest = query.order === "newest";
  const after = query.after ?? (newest ? LAST : FIRST);
  // The start-time bound on the side the cursor moves away from is left out once the cursor
  // is past it (it then says nothing more), so the planner takes the cursor as the index
  // range's start: a page deep in a time window starts at its cursor too.
  const { startedAfter, startedBefore } = query;
  const at = after.startedAt;
  const past = (bound: number) => query.after !== undefined && (newest ? at < bound : at >= bound);
  if (startedAfter !== undefined && (newest || !past(startedAfter))) {
    where += ` AND started_at >= ${p(startedAfter)}`;
  }
  if (startedBefore !== undefined && (!newest || !past(startedBefore))) {
    where += ` AND started_at < ${p(startedBefore)}`;
  }
  const beyond = newest ? "<" : ">";
  // A row-value comparison, which both databases read as a range of the index: a page deep
  // in the list starts at its cursor instead of stepping over every run before it.
  const [from, id] = [dialect.cast(p(at), "bigint"), dialect.cast(p(after.runId), "text")];
  return `${where} AND (started_at, run_id) ${beyond} (${from}, ${id})`;
}

/**
 * Without a cursor, a position before the first run of the order (every start time is above
 * -1 and below the largest safe integer), so a first page has the shape of the others.
 */
const FIRST: RunPosition = { startedAt: -1, runId: "" };
const LAST: RunPosition = { startedAt: Number.MAX_SAFE_INTEGER, runId: "" };

export function toRunRecord(row: RunRow): RunRecord {
  return {
    namespace: row.namespace,
    workflowId: row.workflow_id,
    runId: row.run_id,
    definitionVersion: row.definition_version,
    definitionName: row.definition_name ?? "",
    status: row.status as RunStatus,
    startedAt: Number(row.started_at),
    updatedAt: row.last_event === null ? Number(row.updated_at) : lastStoredAt(row.last_event),
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

/**
 * The events of one stored row, undecoded: a JSON array of the events of one append, or
 * (written before migration 12) one event.
 */
function storedEvents(text: string): unknown[] {
  const stored: unknown = JSON.parse(text);
  return Array.isArray(stored) ? stored : [stored];
}

/** The events of one stored row (`storedEvents`), decoded. */
export function decodeStoredEvents(text: string): HistoryEvent[] {
  return storedEvents(text).map((e) => historyEvent.run(e, undefined));
}

/** How many events a stored row holds. */
export function storedEventCount(text: string): number {
  return storedEvents(text).length;
}

/** The time of the last event a stored row holds. */
function lastStoredAt(text: string): number {
  return Number((storedEvents(text).at(-1) as { at: unknown }).at);
}

/** A run that has not ended: it keeps its place in memory and is reloaded at start-up. */
export function isLive(status: RunStatus): boolean {
  return status === "Running" || status === "Paused";
}

/** A run's end as its row keeps it: the time, the output, or the failure (code, message). */
export interface RunEnd {
  readonly at: number;
  readonly output: string | null;
  readonly failure: readonly [string, string] | null;
}

/** What a batch's events say about the run's end, for its row. */
export function endOf(events: readonly HistoryEvent[]): RunEnd | undefined {
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

export function toOutboxRow(r: OutboxTableRow): OutboxRow {
  return {
    runId: r.run_id,
    namespace: r.namespace,
    activityId: r.activity_id,
    attempt: r.attempt,
    state: r.state,
  };
}
