/**
 * A benchmark-only EngineStore on node:sqlite, to measure the engine with the kind of
 * commit the server's SQLite persistence makes (WAL, synchronous = FULL, one transaction per
 * engine commit). It is not the server's schema: the server's persistence layer implements
 * EngineStore over its own migrations; this exists so `bench:workflows` can report figures
 * with SQLite durability before that wiring lands.
 */

import { DatabaseSync } from "node:sqlite";
import type { HistoryEvent } from "../../src/workflow/engine/history.ts";
import type {
  EngineStore,
  OutboxRow,
  RunAppend,
  StoredRun,
} from "../../src/workflow/engine/store.ts";

export class SqliteHistoryStore implements EngineStore {
  readonly #db: DatabaseSync;
  readonly #insertEvent;
  readonly #upsertRun;
  readonly #upsertOutbox;
  readonly #nextSeq = new Map<string, number>();
  commits = 0;

  constructor(path: string) {
    this.#db = new DatabaseSync(path);
    this.#db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = FULL;
      -- Checkpoints sync the database file; at the default (1000 pages) they come often
      -- enough to double the cost of a step at C = 1 once the database has grown.
      PRAGMA wal_autocheckpoint = 10000;
      CREATE TABLE IF NOT EXISTS runs (
        run_id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL, namespace TEXT NOT NULL,
        definition_version TEXT NOT NULL, status TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS events (
        id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS events_by_run ON events (run_id, seq);
      CREATE TABLE IF NOT EXISTS outbox (
        run_id TEXT NOT NULL, activity_id INTEGER NOT NULL, attempt INTEGER NOT NULL,
        namespace TEXT NOT NULL, state TEXT NOT NULL,
        PRIMARY KEY (run_id, activity_id, attempt));
      CREATE INDEX IF NOT EXISTS outbox_open ON outbox (namespace, state);
    `);
    this.#upsertOutbox = this.#db.prepare(
      `INSERT INTO outbox (run_id, activity_id, attempt, namespace, state) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (run_id, activity_id, attempt) DO UPDATE SET state = excluded.state`,
    );
    this.#insertEvent = this.#db.prepare(
      "INSERT INTO events (run_id, seq, event) VALUES (?, ?, ?)",
    );
    this.#upsertRun = this.#db.prepare(
      `INSERT INTO runs (run_id, workflow_id, namespace, definition_version, status) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET status = excluded.status`,
    );
  }

  async commit(batch: readonly RunAppend[]): Promise<void> {
    this.#db.exec("BEGIN");
    try {
      for (const r of batch) {
        let seq = this.#nextSeq.get(r.runId) ?? 0;
        for (const e of r.events) this.#insertEvent.run(r.runId, seq++, JSON.stringify(e));
        this.#nextSeq.set(r.runId, seq);
        this.#upsertRun.run(r.runId, r.workflowId, r.namespace, r.definitionVersion, r.status);
        for (const w of r.outbox ?? []) {
          this.#upsertOutbox.run(r.runId, w.activityId, w.attempt, r.namespace, w.state);
        }
      }
      this.#db.exec("COMMIT");
    } catch (error) {
      this.#db.exec("ROLLBACK");
      throw error;
    }
    this.commits++;
  }

  async loadRunning(): Promise<StoredRun[]> {
    const runs = this.#db
      .prepare(
        "SELECT run_id, workflow_id, namespace, definition_version FROM runs WHERE status IN ('Running', 'Paused')",
      )
      .all() as {
      run_id: string;
      workflow_id: string;
      namespace: string;
      definition_version: string;
    }[];
    const events = this.#db.prepare("SELECT event FROM events WHERE run_id = ? ORDER BY seq");
    return runs.map((r) => ({
      runId: r.run_id,
      workflowId: r.workflow_id,
      namespace: r.namespace,
      definitionVersion: r.definition_version,
      history: (events.all(r.run_id) as { event: string }[]).map(
        (row) => JSON.parse(row.event) as HistoryEvent,
      ),
    }));
  }

  async loadOutbox(): Promise<OutboxRow[]> {
    const rows = this.#db
      .prepare(
        "SELECT run_id, activity_id, attempt, namespace, state FROM outbox WHERE state <> 'done'",
      )
      .all() as {
      run_id: string;
      activity_id: number;
      attempt: number;
      namespace: string;
      state: OutboxRow["state"];
    }[];
    return rows.map((r) => ({
      runId: r.run_id,
      namespace: r.namespace,
      activityId: r.activity_id,
      attempt: r.attempt,
      state: r.state,
    }));
  }

  /** Claimed rows now, by namespace (sampled by bench:fanout). */
  claimedCount(namespace: string): number {
    const row = this.#db
      .prepare("SELECT count(*) AS n FROM outbox WHERE namespace = ? AND state = 'claimed'")
      .get(namespace) as { n: number };
    return row.n;
  }

  close(): void {
    this.#db.close();
  }
}
