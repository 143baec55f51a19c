/**
 * The SQLite schema as an ordered list of versioned migrations. Each migration is applied
 * once, inside the start-up transaction, and recorded in `schema_migrations` (version, name,
 * time); the database's schema version is the highest recorded one. A database whose
 * version is higher than the last migration here was written by a newer Skein: start-up
 * refuses it (`storage_schema_too_new`) rather than run on a schema it does not know.
 * Migrations are append-only: a released one is never edited.
 */

import type { DatabaseSync } from "node:sqlite";
import { workflowError } from "../../errors.ts";

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "namespaces",
    sql: `
      CREATE TABLE namespaces (
        name TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        created_by TEXT NOT NULL,
        max_in_flight_activities INTEGER
      ) STRICT;
    `,
  },
  {
    version: 2,
    name: "workflows",
    // Definitions are keyed by content hash within a namespace; \`seq\` orders registrations
    // so "latest of a name" is the last one registered (re-registering an old version makes
    // it the latest again). Runs carry their next event position so an engine commit appends
    // without reading; events are one row each, keyed by (run, position).
    sql: `
      CREATE TABLE workflow_definitions (
        namespace TEXT NOT NULL,
        version TEXT NOT NULL,
        name TEXT NOT NULL,
        canonical TEXT NOT NULL,
        registered_at INTEGER NOT NULL,
        registered_by TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (namespace, version)
      ) STRICT;
      CREATE INDEX workflow_definitions_latest ON workflow_definitions (namespace, name, seq);
      CREATE TABLE workflow_runs (
        run_id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL,
        workflow_id TEXT NOT NULL,
        definition_version TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        ended_at INTEGER,
        output_json TEXT,
        failure_code TEXT,
        failure_message TEXT,
        next_seq INTEGER NOT NULL,
        UNIQUE (namespace, workflow_id)
      ) STRICT;
      CREATE INDEX workflow_runs_by_start ON workflow_runs (namespace, started_at, run_id);
      CREATE INDEX workflow_runs_running ON workflow_runs (status) WHERE status = 'Running';
      CREATE TABLE workflow_events (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        event TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 3,
    name: "worker_deployments",
    sql: `
      CREATE TABLE worker_deployments (
        name TEXT PRIMARY KEY,
        document TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 4,
    name: "workflow_outbox",
    // Members of parallel and collect steps, written in the engine commit that creates
    // them: pending until the dispatcher claims them, claimed while it holds them, done
    // once handed off to a worker. Rows not done are reloaded after a restart.
    sql: `
      CREATE TABLE workflow_outbox (
        run_id TEXT NOT NULL,
        activity_id INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        namespace TEXT NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (run_id, activity_id, attempt)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX workflow_outbox_open ON workflow_outbox (state) WHERE state <> 'done';
    `,
  },
  {
    version: 5,
    name: "agent_transcripts",
    // Transcript entries of agent attempts; seq keeps arrival order.
    sql: `
      CREATE TABLE agent_transcripts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL,
        activity_id INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        entry TEXT NOT NULL,
        at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX agent_transcripts_attempt ON agent_transcripts (run_id, activity_id, attempt, seq);
    `,
  },
  {
    version: 6,
    name: "workflow_runs_by_status",
    // A list filtered by status (Running, say) walks only the runs of that status, not
    // every run the namespace ever had.
    sql: `
      CREATE INDEX workflow_runs_by_status ON workflow_runs (namespace, status, started_at, run_id);
    `,
  },
  {
    version: 7,
    name: "cluster",
    // The PostgreSQL migration 7 adds the cluster's tables (nodes, shard leases) and the shard
    // of each run and outbox row. A single SQLite node owns the one shard there is, so here the
    // version only keeps the two lists aligned: no table changes.
    sql: "SELECT 1;",
  },
  {
    version: 8,
    name: "workflow_runs_by_start_definition",
    // A list filtered by definition walks the start-time index and tests each run's version:
    // with the version in the index entry the test needs no read of the run's row, which
    // SQLite pays more for walking backwards (a newest-first list) than forwards. Both orders
    // then cost the same, and less than before.
    sql: `
      DROP INDEX workflow_runs_by_start;
      CREATE INDEX workflow_runs_by_start
        ON workflow_runs (namespace, started_at, run_id, definition_version);
    `,
  },
  {
    version: 9,
    name: "workflow_runs_by_definition",
    // A list filtered by definition reads, for each of the name's versions, that version's
    // runs in start order from this index and merges them: a rare definition no longer walks
    // every run the namespace started to find its few.
    sql: `
      CREATE INDEX workflow_runs_by_definition
        ON workflow_runs (namespace, definition_version, started_at, run_id);
    `,
  },
];

export const LATEST_SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/** Brings the schema up to date in one transaction; returns the resulting version. */
export function migrate(
  db: DatabaseSync,
  file: string,
  migrations: readonly Migration[] = MIGRATIONS,
): number {
  const latest = migrations.at(-1)?.version ?? 0;
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    ) STRICT`);
    const row = db.prepare("SELECT max(version) AS version FROM schema_migrations").get() as {
      version: number | null;
    };
    const current = row.version ?? 0;
    if (current > latest) {
      throw workflowError(
        "storage_schema_too_new",
        `${file} is at schema version ${current}, newer than this skein knows (${latest}); ` +
          "run a skein at least as new as the one that wrote it",
      );
    }
    const record = db.prepare(
      "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
    );
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, Date.now());
    }
    db.exec("COMMIT");
    return Math.max(current, latest);
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  }
}
