/**
 * Runs and their histories over either backend: the engine's group commit (`run-commit.ts`)
 * and the reads the API answers from. Each live run's next event position and the status
 * its row holds are kept in memory, filled by `loadRunning` and by commits, and changed only
 * once a commit is durable. Stored
 * events are decoded with the history decoder when read back.
 *
 * Unscoped, a store reads every run (a single node; the API of a cluster node). Scoped to a
 * shard (cluster mode, `RunScope`), it loads only that shard's runs and outbox rows, writes the
 * shard into every row and checks its fence first in every commit.
 */

import type { HistoryEvent } from "../../engine/history.ts";
import type { OutboxRow, RunAppend, StoredRun } from "../../engine/store.ts";
import type { HistoryRange, RunPage, RunQuery, RunRecord, RunStore } from "../workflows.ts";
import type { SqlDatabase } from "./database.ts";
import {
  type EncodedAppend,
  encodeBatch,
  groupCommit,
  type KnownRun,
  type RunScope,
} from "./run-commit.ts";
import {
  decodeStoredEvents,
  isLive,
  listRunsSql,
  MAX_LISTED_VERSIONS,
  type OutboxTableRow,
  RUN_COLUMNS,
  type RunRow,
  runPage,
  toOutboxRow,
  toRunRecord,
} from "./run-rows.ts";
import { all, get } from "./unit.ts";

/** A shard condition, for the loads of a scoped store. */
const IN_SHARD = " AND r.shard = ?";
const LIVE = "FROM workflow_runs r WHERE r.status IN ('Running', 'Paused')";
const RUNNING = `SELECT run_id, workflow_id, namespace, definition_version, status ${LIVE}`;
// The live runs' events by the events' primary key, run by run: never a walk of every event
// (most of a database's events belong to runs that ended).
const RUNNING_EVENTS = `SELECT run_id, event FROM workflow_events WHERE run_id IN (SELECT run_id ${LIVE}`;
const OPEN_OUTBOX =
  "SELECT run_id, activity_id, attempt, namespace, state FROM workflow_outbox r " +
  "WHERE r.state <> 'done'";
const BY_WORKFLOW_ID = `SELECT ${RUN_COLUMNS} FROM workflow_runs WHERE namespace = ? AND workflow_id = ?`;
const VERSIONS = "SELECT version FROM workflow_definitions WHERE namespace = ? AND name = ?";
const EXISTS = "SELECT 1 AS one FROM workflow_runs WHERE run_id = ?";
const EVENTS = "SELECT seq, event FROM workflow_events WHERE run_id = ? ORDER BY seq";
// A row's seq is the index in the run of its first event (appends count them from 0), so a
// range starts at the last row at or before its first index; each row holds at least one
// event, so `limit + 1` rows from there hold the range.
const EVENT_RANGE =
  "SELECT seq, event FROM workflow_events WHERE run_id = ? AND seq >= coalesce(" +
  "(SELECT max(seq) FROM workflow_events WHERE run_id = ? AND seq <= ?), 0) ORDER BY seq LIMIT ?";

/** The statements recovery loads with: the live runs, their events, the open outbox rows. */
export function recoveryLoads(scoped: boolean): {
  running: string;
  events: string;
  outbox: string;
} {
  const shard = scoped ? IN_SHARD : "";
  return {
    running: RUNNING + shard,
    events: `${RUNNING_EVENTS}${shard}) ORDER BY run_id, seq`,
    outbox: `${OPEN_OUTBOX}${shard} ORDER BY run_id, activity_id, attempt`,
  };
}

interface LiveRunRow {
  run_id: string;
  workflow_id: string;
  namespace: string;
  definition_version: string;
  status: "Running" | "Paused";
}

export class SqlRunStore implements RunStore {
  readonly #db: SqlDatabase;
  readonly #scope: RunScope | undefined;
  readonly #known = new Map<string, KnownRun>();
  /** The statements of this store's loads (a scoped one's read its shard only) and their parameters. */
  readonly #loads: { running: string; events: string; outbox: string; params: number[] };

  constructor(db: SqlDatabase, scope?: RunScope) {
    this.#db = db;
    this.#scope = scope;
    this.#loads = {
      ...recoveryLoads(scope !== undefined),
      params: scope === undefined ? [] : [scope.shard],
    };
  }

  async commit(batch: readonly RunAppend[]): Promise<void> {
    const encoded = encodeBatch(batch);
    if (encoded !== null) await this.commitEncoded(encoded);
  }

  /** `commit` of a batch already encoded (`encodeBatch`, on SQLite by the main thread). */
  async commitEncoded(batch: readonly EncodedAppend[]): Promise<void> {
    const { dialect } = this.#db;
    const known = this.#known;
    const scope = this.#scope;
    const positions = await this.#db.transaction(() => groupCommit(dialect, batch, known, scope));
    // Positions are remembered only once durable: a failed commit leaves none behind. A run
    // appended to more than once keeps the status of its last append with events, as its
    // row does (an append of outbox writes alone writes no row).
    for (const r of batch) {
      const seq = positions.get(r.runId);
      if (seq === undefined || r.count === 0) continue;
      if (isLive(r.status)) this.#known.set(r.runId, { seq, status: r.status });
      else this.#known.delete(r.runId);
    }
  }

  async loadRunning(): Promise<StoredRun[]> {
    const loads = this.#loads;
    const { runs, events } = await this.#db.autocommit(function* () {
      const runs = yield* all<LiveRunRow>(loads.running, loads.params);
      if (runs.length === 0) return { runs, events: [] };
      const events = yield* all<{ run_id: string; event: string }>(loads.events, loads.params);
      return { runs, events };
    });
    const histories = new Map<string, HistoryEvent[]>();
    for (const e of events) {
      const list = histories.get(e.run_id);
      const decoded = decodeStoredEvents(e.event);
      if (list === undefined) histories.set(e.run_id, decoded);
      else for (const event of decoded) list.push(event);
    }
    return runs.map((r) => {
      const history = histories.get(r.run_id) ?? [];
      this.#known.set(r.run_id, { seq: history.length, status: r.status });
      return {
        runId: r.run_id,
        workflowId: r.workflow_id,
        namespace: r.namespace,
        definitionVersion: r.definition_version,
        history,
      };
    });
  }

  loadOutbox(): Promise<OutboxRow[]> {
    const loads = this.#loads;
    return this.#db.autocommit(function* () {
      return (yield* all<OutboxTableRow>(loads.outbox, loads.params)).map(toOutboxRow);
    });
  }

  byWorkflowId(namespace: string, workflowId: string): Promise<RunRecord | undefined> {
    return this.#db.autocommit(function* () {
      const row = yield* get<RunRow>(BY_WORKFLOW_ID, [namespace, workflowId]);
      return row === undefined ? undefined : toRunRecord(row);
    });
  }

  list(query: RunQuery): Promise<RunPage> {
    const { dialect } = this.#db;
    return this.#db.autocommit(function* () {
      let versions: string[] | undefined;
      if (query.definition !== undefined) {
        const rows = yield* all<{ version: string }>(VERSIONS, [query.namespace, query.definition]);
        if (rows.length === 0) return { runs: [], next: undefined };
        if (rows.length <= MAX_LISTED_VERSIONS) versions = rows.map((r) => r.version);
      }
      const { sql, params } = listRunsSql(query, dialect, versions);
      return runPage(yield* all<RunRow>(sql, params), query.limit);
    });
  }

  history(runId: string, range?: HistoryRange): Promise<HistoryEvent[] | undefined> {
    return this.#db.autocommit(function* () {
      if ((yield* get(EXISTS, [runId])) === undefined) return undefined;
      if (range === undefined) {
        return (yield* all<{ event: string }>(EVENTS, [runId])).flatMap((e) =>
          decodeStoredEvents(e.event),
        );
      }
      const { after, limit } = range;
      const rows = yield* all<{ seq: number | string; event: string }>(EVENT_RANGE, [
        runId,
        runId,
        after,
        limit + 1,
      ]);
      const events: HistoryEvent[] = [];
      for (const row of rows) {
        let index = Number(row.seq);
        for (const event of decodeStoredEvents(row.event)) {
          if (index++ >= after && events.length < limit) events.push(event);
        }
      }
      return events;
    });
  }
}
