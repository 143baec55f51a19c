/**
 * Runs and their histories on PostgreSQL, the same model as on SQLite, and the engine's
 * group commit: one transaction per engine commit with a constant number of statements
 * whatever the batch holds (events inserted from arrays with `unnest`, run rows upserted
 * the same way), so a commit is a few round trips and one synchronous WAL flush. Each run's
 * next event position is kept in memory; runs not in memory read theirs in one query.
 *
 * In a cluster each owned shard has its own store, scoped by a `ShardFence`: it loads only
 * its shard's runs and outbox rows, writes the shard into every row, and every commit first
 * checks, in the same transaction, that the node still holds the shard's lease at the
 * fencing epoch it was granted (`FOR SHARE`, so a takeover waits for the commit to end). A
 * node that lost the lease cannot commit to the shard: the commit fails with `shard_fenced`.
 */

import type { Pool, PoolClient } from "pg";
import { SkeinError } from "../../../common/errors.ts";
import type { HistoryEvent, RunStatus } from "../../engine/history.ts";
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

/** A shard's lease as this node holds it: the token every commit to the shard presents. */
export interface ShardFence {
  readonly shard: number;
  readonly nodeId: string;
  readonly incarnation: bigint;
  readonly epoch: bigint;
}

/** The lease row must still be this node's, at this epoch, and not expired (database clock). */
const FENCE_SQL =
  "SELECT 1 FROM shard_leases WHERE shard = $1 AND owner = $2 AND owner_incarnation = $3 " +
  "AND epoch = $4 AND expires_at > clock_timestamp() FOR SHARE";

async function checkFence(client: PoolClient, fence: ShardFence): Promise<void> {
  const { rowCount } = await client.query(FENCE_SQL, [
    fence.shard,
    fence.nodeId,
    fence.incarnation.toString(),
    fence.epoch.toString(),
  ]);
  if (rowCount !== 1) {
    throw new SkeinError(
      "shard_fenced",
      `shard ${fence.shard}: this node no longer holds its lease at epoch ${fence.epoch}`,
      { status: 503 },
    );
  }
}

export class PostgresRunStore implements RunStore {
  readonly #pool: Pool;
  readonly #nextSeq = new Map<string, number>();
  readonly #fence: ShardFence | undefined;

  /** Unscoped (reads across shards), or scoped to one owned shard by its fence. */
  constructor(pool: Pool, fence?: ShardFence) {
    this.#pool = pool;
    this.#fence = fence;
  }

  async commit(batch: readonly RunAppend[]): Promise<void> {
    const appends = batch.filter((r) => r.events.length > 0);
    const outbox = { run: [] as string[], activity: [] as number[], attempt: [] as number[] };
    const outboxMore = { namespace: [] as string[], state: [] as string[] };
    // A later write to the same row wins: keep the last write of each row, in order.
    const lastWrite = new Map<string, number>();
    for (const r of batch) {
      for (const o of r.outbox ?? []) {
        const key = `${r.runId}\u0000${o.activityId}\u0000${o.attempt}`;
        const at = lastWrite.get(key);
        if (at !== undefined) {
          outboxMore.state[at] = o.state;
          continue;
        }
        lastWrite.set(key, outbox.run.length);
        outbox.run.push(r.runId);
        outbox.activity.push(o.activityId);
        outbox.attempt.push(o.attempt);
        outboxMore.namespace.push(r.namespace);
        outboxMore.state.push(o.state);
      }
    }
    if (appends.length === 0 && outbox.run.length === 0) return;
    const client = await this.#pool.connect();
    const positions = new Map<string, number>();
    try {
      await client.query("BEGIN");
      if (this.#fence !== undefined) await checkFence(client, this.#fence);
      const shard = this.#fence?.shard ?? 0;
      if (outbox.run.length > 0) {
        // Outbox rows go in the same transaction as the events that create them.
        await client.query(
          `INSERT INTO workflow_outbox (run_id, activity_id, attempt, namespace, state, shard)
           SELECT *, $6::int FROM unnest($1::text[], $2::int[], $3::int[], $4::text[], $5::text[])
           ON CONFLICT (run_id, activity_id, attempt) DO UPDATE SET state = excluded.state`,
          [
            outbox.run,
            outbox.activity,
            outbox.attempt,
            outboxMore.namespace,
            outboxMore.state,
            shard,
          ],
        );
      }
      if (appends.length === 0) {
        await client.query("COMMIT");
        return;
      }
      const unknown = [
        ...new Set(appends.map((r) => r.runId).filter((id) => !this.#nextSeq.has(id))),
      ];
      if (unknown.length > 0) {
        const { rows } = await client.query<{ run_id: string; next_seq: number }>(
          "SELECT run_id, next_seq FROM workflow_runs WHERE run_id = ANY($1)",
          [unknown],
        );
        for (const row of rows) positions.set(row.run_id, row.next_seq);
        for (const id of unknown) if (!positions.has(id)) positions.set(id, 0);
      }
      const ev = { run: [] as string[], seq: [] as number[], text: [] as string[] };
      const rows = new Map<string, (string | number | null)[]>();
      for (const r of appends) {
        let seq = positions.get(r.runId) ?? this.#nextSeq.get(r.runId)!;
        for (const e of r.events) {
          ev.run.push(r.runId);
          ev.seq.push(seq++);
          ev.text.push(JSON.stringify(e));
        }
        positions.set(r.runId, seq);
        const end = isLive(r.status) ? undefined : endOf(r.events);
        const previous = rows.get(r.runId);
        rows.set(r.runId, [
          r.runId,
          r.namespace,
          r.workflowId,
          r.definitionVersion,
          r.status,
          (previous?.[5] as number | undefined) ?? r.events[0]!.at,
          r.events.at(-1)!.at,
          seq,
          end?.at ?? null,
          end?.output ?? null,
          end?.failure?.[0] ?? null,
          end?.failure?.[1] ?? null,
        ]);
      }
      await client.query(
        "INSERT INTO workflow_events (run_id, seq, event) " +
          "SELECT * FROM unnest($1::text[], $2::int[], $3::text[])",
        [ev.run, ev.seq, ev.text],
      );
      const columns: unknown[][] = Array.from({ length: 12 }, () => []);
      for (const row of rows.values()) {
        for (let i = 0; i < row.length; i++) columns[i]!.push(row[i]);
      }
      await client.query(
        `INSERT INTO workflow_runs (run_id, namespace, workflow_id, definition_version, status,
           started_at, updated_at, next_seq, ended_at, output_json, failure_code, failure_message,
           shard)
         SELECT *, $13::int FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
           $6::bigint[], $7::bigint[], $8::int[], $9::bigint[], $10::text[], $11::text[], $12::text[])
         ON CONFLICT (run_id) DO UPDATE SET status = excluded.status,
           updated_at = excluded.updated_at, next_seq = excluded.next_seq,
           ended_at = coalesce(excluded.ended_at, workflow_runs.ended_at),
           output_json = coalesce(excluded.output_json, workflow_runs.output_json),
           failure_code = coalesce(excluded.failure_code, workflow_runs.failure_code),
           failure_message = coalesce(excluded.failure_message, workflow_runs.failure_message)`,
        [...columns, shard],
      );
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
    // Positions are remembered only once durable: a failed commit leaves none behind.
    for (const r of appends) {
      const status = statusAfter(batch, r.runId);
      if (isLive(status)) this.#nextSeq.set(r.runId, positions.get(r.runId)!);
      else this.#nextSeq.delete(r.runId);
    }
  }

  async loadRunning(): Promise<StoredRun[]> {
    // Scoped: this shard's runs only ($1 null reads every shard).
    const shard = [this.#fence?.shard ?? null];
    const { rows } = await this.#pool.query<{
      run_id: string;
      workflow_id: string;
      namespace: string;
      definition_version: string;
    }>(
      "SELECT run_id, workflow_id, namespace, definition_version FROM workflow_runs " +
        "WHERE status IN ('Running', 'Paused') AND ($1::int IS NULL OR shard = $1)",
      shard,
    );
    if (rows.length === 0) return [];
    const { rows: events } = await this.#pool.query<{ run_id: string; event: string }>(
      "SELECT e.run_id, e.event FROM workflow_events e JOIN workflow_runs r USING (run_id) " +
        "WHERE r.status IN ('Running', 'Paused') AND ($1::int IS NULL OR r.shard = $1) " +
        "ORDER BY e.run_id, e.seq",
      shard,
    );
    const histories = new Map<string, HistoryEvent[]>();
    for (const e of events) {
      const list = histories.get(e.run_id) ?? [];
      list.push(decodeStoredEvent(e.event));
      histories.set(e.run_id, list);
    }
    return rows.map((r) => {
      const history = histories.get(r.run_id) ?? [];
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

  async loadOutbox(): Promise<OutboxRow[]> {
    const { rows } =
      this.#fence === undefined
        ? await this.#pool.query<OutboxTableRow>(OPEN_OUTBOX_SQL)
        : await this.#pool.query<OutboxTableRow>(
            "SELECT run_id, activity_id, attempt, namespace, state FROM workflow_outbox " +
              "WHERE state <> 'done' AND shard = $1 ORDER BY run_id, activity_id, attempt",
            [this.#fence.shard],
          );
    return rows.map(toOutboxRow);
  }

  async byWorkflowId(namespace: string, workflowId: string): Promise<RunRecord | undefined> {
    const { rows } = await this.#pool.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM workflow_runs WHERE namespace = $1 AND workflow_id = $2`,
      [namespace, workflowId],
    );
    return rows[0] === undefined ? undefined : toRunRecord(rows[0]);
  }

  async list(query: RunQuery): Promise<RunPage> {
    // Only the filters given become conditions: `($2 IS NULL OR status = $2)` would leave a
    // generic plan unable to use the (namespace, status, started_at, run_id) index.
    let versions: string[] | undefined;
    if (query.definition !== undefined) {
      const { rows } = await this.#pool.query<{ version: string }>(
        "SELECT version FROM workflow_definitions WHERE namespace = $1 AND name = $2",
        [query.namespace, query.definition],
      );
      if (rows.length === 0) return { runs: [], next: undefined };
      if (rows.length <= MAX_LISTED_VERSIONS) versions = rows.map((r) => r.version);
    }
    const { sql, params } = listRunsSql(query, "postgres", versions);
    const { rows } = await this.#pool.query<RunRow>(sql, params);
    return runPage(rows, query.limit);
  }

  async history(runId: string, range?: HistoryRange): Promise<HistoryEvent[] | undefined> {
    const { rows: exists } = await this.#pool.query(
      "SELECT 1 FROM workflow_runs WHERE run_id = $1",
      [runId],
    );
    if (exists.length === 0) return undefined;
    // seq is the event's index in the run (appends count it from 0), so a range is a seq range.
    const { rows } = await this.#pool.query<{ event: string }>(
      range === undefined
        ? "SELECT event FROM workflow_events WHERE run_id = $1 ORDER BY seq"
        : "SELECT event FROM workflow_events WHERE run_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3",
      range === undefined ? [runId] : [runId, range.after, range.limit],
    );
    return rows.map((e) => decodeStoredEvent(e.event));
  }
}

/** The status a batch leaves a run in (its last append's). */
function statusAfter(batch: readonly RunAppend[], runId: string): RunStatus {
  let status: RunStatus = "Running";
  for (const r of batch) if (r.runId === runId) status = r.status;
  return status;
}
