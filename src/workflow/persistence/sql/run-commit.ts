/**
 * The engine's group commit over either backend, as one unit: the events of every run that
 * advanced in one engine tick, each run's row (status, times, end) and the outbox rows they
 * create, in one transaction, so there is one durable sync per engine commit. Each table is
 * written with `Dialect.insertRows`: a constant number of statements on PostgreSQL whatever
 * the batch holds, one prepared statement stepped per row on SQLite.
 *
 * A run's next event position comes from the store's memory (filled by `loadRunning` and by
 * earlier commits), so an append never reads first; a batch that starts a run needs no look-up
 * (its first event is `RunStarted`, so the run is new), and any other run not in memory has
 * its position read from its events, all such runs in one statement.
 *
 * A run's row is written only when it says something new: when the run starts, when its
 * status changes (paused, resumed, ended: the end columns with it) and when the store does
 * not know the status its row holds. A step of a live run appends its events and leaves the
 * row alone, so the row's indexes (two of them on `status`) are not rewritten per step; the
 * time of a live run's last event, its `updated_at`, is read from its events instead
 * (`RUN_COLUMNS`). The store's memory holds each live run's position and the status its row
 * holds (`KnownRun`).
 *
 * The events of one append are one row of `workflow_events` (migration 12): a JSON array,
 * keyed by the run and the position of its first event (run-rows.ts reads them back). A step
 * appends two events (a result and the next attempt), so this halves the rows and index
 * entries a commit writes. An append of more than `EVENTS_PER_ROW` events (a collect
 * scheduling its members) takes several rows, so a page of a history, or a run's last
 * event, never parses more than one row's worth of events it does not need.
 *
 * A batch is written in its encoded form (`encodeBatch`): each append's events already their
 * stored JSON text and the run row's columns already taken from the events. On SQLite the
 * encoding runs on the server's main thread and only these strings and numbers cross to the
 * storage thread: a structured clone of flat strings costs a fraction of one of the event
 * objects, and each event is serialized once instead of cloned and then serialized.
 */

import type { HistoryEvent, RunStatus } from "../../engine/history.ts";
import type { OutboxWrite, RunAppend, RunIdentity } from "../../engine/store.ts";
import type { Column, Dialect, RowsTarget } from "./dialect.ts";
import { endOf, isLive, type RunEnd, storedEventCount } from "./run-rows.ts";
import { all, type Param, type Unit } from "./unit.ts";

/** A store scoped to one shard: the shard its rows carry, and the fence every commit checks. */
export interface RunScope {
  readonly shard: number;
  /** Fails the transaction unless this node may still write to the shard. */
  fence(): Unit<void>;
}

const text = (name: string): Column => ({ name, type: "text" });
const int = (name: string): Column => ({ name, type: "int" });
const bigint = (name: string): Column => ({ name, type: "bigint" });
const SHARD = int("shard");

/** A table's target without the shard column (the default, 0) and with it. */
function targets(table: string, columns: Column[], tail: string) {
  return {
    unscoped: { table, columns, tail } satisfies RowsTarget,
    scoped: { table, columns: [...columns, SHARD], tail } satisfies RowsTarget,
  };
}

const OUTBOX = targets(
  "workflow_outbox",
  [text("run_id"), int("activity_id"), int("attempt"), text("namespace"), text("state")],
  "ON CONFLICT (run_id, activity_id, attempt) DO UPDATE SET state = excluded.state",
);
/** Events carry no shard: their run's row places them. */
const EVENTS: RowsTarget = {
  table: "workflow_events",
  columns: [text("run_id"), int("seq"), text("event")],
  tail: "",
};
/** A run's end columns keep what they hold unless this commit ends the run. */
const RUNS = targets(
  "workflow_runs",
  [
    text("run_id"),
    text("namespace"),
    text("workflow_id"),
    text("definition_version"),
    text("status"),
    bigint("started_at"),
    bigint("updated_at"),
    bigint("ended_at"),
    text("output_json"),
    text("failure_code"),
    text("failure_message"),
  ],
  "ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, " +
    "updated_at = excluded.updated_at, " +
    "ended_at = coalesce(excluded.ended_at, workflow_runs.ended_at), " +
    "output_json = coalesce(excluded.output_json, workflow_runs.output_json), " +
    "failure_code = coalesce(excluded.failure_code, workflow_runs.failure_code), " +
    "failure_message = coalesce(excluded.failure_message, workflow_runs.failure_message)",
);

/** What the store remembers of a live run: its next event position and its row's status. */
export interface KnownRun {
  readonly seq: number;
  readonly status: RunStatus;
}

/** A `RunAppend` as it is written: events as their stored text, the run row's columns taken. */
export interface EncodedAppend extends RunIdentity {
  readonly status: RunStatus;
  /**
   * The new events' stored text, one JSON array per row: each of `EVENTS_PER_ROW` events,
   * the last of the rest.
   */
  readonly events: readonly string[];
  /** How many new events there are. */
  readonly count: number;
  /** Whether the first event is `RunStarted` (the run is new: its position is 0). */
  readonly starts: boolean;
  /** The first and last new event's time (0 without events). */
  readonly firstAt: number;
  readonly lastAt: number;
  /** The run's end as these events say it, for its row; null while it lives. */
  readonly end: RunEnd | null;
  readonly outbox: readonly OutboxWrite[] | undefined;
}

/** The most events one `workflow_events` row holds. */
export const EVENTS_PER_ROW = 32;

function rowsOf(events: readonly HistoryEvent[]): string[] {
  const n = events.length;
  if (n <= EVENTS_PER_ROW) return n === 0 ? [] : [JSON.stringify(events)];
  const rows: string[] = [];
  for (let i = 0; i < n; i += EVENTS_PER_ROW) {
    rows.push(JSON.stringify(events.slice(i, i + EVENTS_PER_ROW)));
  }
  return rows;
}

/** Encodes a batch for `groupCommit`; null when it writes nothing (no transaction needed). */
export function encodeBatch(batch: readonly RunAppend[]): EncodedAppend[] | null {
  let writes = false;
  const out: EncodedAppend[] = [];
  for (let i = 0; i < batch.length; i++) {
    const r = batch[i]!;
    const n = r.events.length;
    if (n > 0 || (r.outbox?.length ?? 0) > 0) writes = true;
    out.push({
      runId: r.runId,
      workflowId: r.workflowId,
      namespace: r.namespace,
      definitionVersion: r.definitionVersion,
      status: r.status,
      events: rowsOf(r.events),
      count: n,
      starts: n > 0 && r.events[0]!.type === "RunStarted",
      firstAt: n > 0 ? r.events[0]!.at : 0,
      lastAt: n > 0 ? r.events[n - 1]!.at : 0,
      end: isLive(r.status) ? null : (endOf(r.events) ?? null),
      outbox: r.outbox,
    });
  }
  return writes ? out : null;
}

/**
 * Writes the batch; returns the next event position of every run it appended to. `known`
 * is the store's memory of live runs; it is not changed here (only a durable commit may).
 */
export function* groupCommit(
  dialect: Dialect,
  batch: readonly EncodedAppend[],
  known: ReadonlyMap<string, KnownRun>,
  scope: RunScope | undefined,
): Unit<Map<string, number>> {
  const pick = <T>(t: { unscoped: T; scoped: T }) => (scope === undefined ? t.unscoped : t.scoped);
  const withShard = (row: Param[]) => (scope === undefined ? row : [...row, scope.shard]);
  if (scope !== undefined) yield* scope.fence();
  // Outbox rows go in the same transaction as the events that create them.
  const outbox = outboxRows(batch).map(withShard);
  if (outbox.length > 0) yield* dialect.insertRows(pick(OUTBOX), outbox);
  const positions = yield* positionsOf(dialect, batch, known);
  const events: Param[][] = [];
  const runs = new Map<string, Param[]>();
  for (const r of batch) {
    if (r.count === 0) continue;
    const first = positions.get(r.runId)!;
    // Every row but the last holds EVENTS_PER_ROW events (`rowsOf`).
    for (let i = 0; i < r.events.length; i++) {
      events.push([r.runId, first + i * EVENTS_PER_ROW, r.events[i]!]);
    }
    const seq = first + r.count;
    positions.set(r.runId, seq);
    const end = r.end;
    // A run appended to twice in one batch keeps the start time of its first append.
    const startedAt = runs.get(r.runId)?.[5] ?? r.firstAt;
    runs.set(r.runId, [
      r.runId,
      r.namespace,
      r.workflowId,
      r.definitionVersion,
      r.status,
      startedAt,
      r.lastAt,
      end?.at ?? null,
      end?.output ?? null,
      end?.failure?.[0] ?? null,
      end?.failure?.[1] ?? null,
    ]);
  }
  if (events.length > 0) {
    yield* dialect.insertRows(EVENTS, events);
    // A run's row is written when its status (after the batch's last append) is not the one
    // its row holds; a run that ends always changes it (the store knows live runs only).
    const rows: Param[][] = [];
    for (const row of runs.values()) {
      if (known.get(row[0] as string)?.status !== row[4]) rows.push(withShard(row));
    }
    if (rows.length > 0) yield* dialect.insertRows(pick(RUNS), rows);
  }
  return positions;
}

/** The outbox writes of a batch, the last write of each row winning, in first-write order. */
function outboxRows(batch: readonly EncodedAppend[]): Param[][] {
  const rows: Param[][] = [];
  const at = new Map<string, number>();
  for (const r of batch) {
    for (const o of r.outbox ?? []) {
      const key = `${r.runId}\u0000${o.activityId}\u0000${o.attempt}`;
      const i = at.get(key);
      if (i !== undefined) rows[i]![4] = o.state;
      else {
        at.set(key, rows.length);
        rows.push([r.runId, o.activityId, o.attempt, r.namespace, o.state]);
      }
    }
  }
  return rows;
}

/** Where each appended run's events start: memory, a new run's 0, or its stored events. */
function* positionsOf(
  dialect: Dialect,
  batch: readonly EncodedAppend[],
  known: ReadonlyMap<string, KnownRun>,
): Unit<Map<string, number>> {
  const positions = new Map<string, number>();
  const unknown: string[] = [];
  for (const r of batch) {
    if (r.count === 0 || positions.has(r.runId)) continue;
    const run = known.get(r.runId);
    if (run !== undefined) positions.set(r.runId, run.seq);
    else if (r.starts) positions.set(r.runId, 0);
    else {
      positions.set(r.runId, 0);
      unknown.push(r.runId);
    }
  }
  if (unknown.length > 0) {
    // Each run's last row of events, by their key (run_id, seq): its position and its count.
    const rows = yield* all<{ run_id: string; seq: number | string; event: string }>(
      "SELECT e.run_id, e.seq, e.event FROM workflow_events e " +
        `WHERE ${dialect.inList("e.run_id")} AND e.seq = ` +
        "(SELECT max(m.seq) FROM workflow_events m WHERE m.run_id = e.run_id)",
      [dialect.list(unknown)],
    );
    for (const row of rows) {
      positions.set(row.run_id, Number(row.seq) + storedEventCount(row.event));
    }
  }
  return positions;
}
