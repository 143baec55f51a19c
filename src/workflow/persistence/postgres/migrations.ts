/**
 * The PostgreSQL schema as ordered, versioned migrations, mirroring the SQLite list version
 * for version (same numbers, same names, same meaning; each backend writes its own SQL).
 * Start-up applies missing ones in one transaction under an advisory lock, so two nodes of
 * a cluster starting together migrate once; a schema newer than this build is refused
 * (`storage_schema_too_new`), exactly as on SQLite.
 */

import type { PoolClient } from "pg";
import { workflowError } from "../../errors.ts";
import type { Migration } from "../sqlite/migrations.ts";

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "namespaces",
    // COLLATE "C": names order by bytes, as on SQLite, whatever the database's locale.
    sql: `
      CREATE TABLE namespaces (
        name TEXT COLLATE "C" PRIMARY KEY,
        created_at BIGINT NOT NULL,
        created_by TEXT NOT NULL,
        max_in_flight_activities INTEGER
      );
    `,
  },
  {
    version: 2,
    name: "workflows",
    // The SQLite migration 2, table for table (times are BIGINT milliseconds).
    sql: `
      CREATE TABLE workflow_definitions (
        namespace TEXT COLLATE "C" NOT NULL,
        version TEXT COLLATE "C" NOT NULL,
        name TEXT COLLATE "C" NOT NULL,
        canonical TEXT NOT NULL,
        registered_at BIGINT NOT NULL,
        registered_by TEXT NOT NULL,
        seq BIGINT NOT NULL,
        PRIMARY KEY (namespace, version)
      );
      CREATE INDEX workflow_definitions_latest ON workflow_definitions (namespace, name, seq);
      CREATE TABLE workflow_runs (
        run_id TEXT COLLATE "C" PRIMARY KEY,
        namespace TEXT COLLATE "C" NOT NULL,
        workflow_id TEXT COLLATE "C" NOT NULL,
        definition_version TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        ended_at BIGINT,
        output_json TEXT,
        failure_code TEXT,
        failure_message TEXT,
        next_seq INTEGER NOT NULL,
        UNIQUE (namespace, workflow_id)
      );
      CREATE INDEX workflow_runs_by_start ON workflow_runs (namespace, started_at, run_id);
      CREATE INDEX workflow_runs_running ON workflow_runs (status) WHERE status = 'Running';
      CREATE TABLE workflow_events (
        run_id TEXT COLLATE "C" NOT NULL,
        seq INTEGER NOT NULL,
        event TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
      );
    `,
  },
  {
    version: 3,
    name: "worker_deployments",
    sql: `
      CREATE TABLE worker_deployments (
        name TEXT COLLATE "C" PRIMARY KEY,
        document TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      );
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
        run_id TEXT COLLATE "C" NOT NULL,
        activity_id INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        namespace TEXT COLLATE "C" NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (run_id, activity_id, attempt)
      );
      CREATE INDEX workflow_outbox_open ON workflow_outbox (state) WHERE state <> 'done';
    `,
  },
  {
    version: 5,
    name: "agent_transcripts",
    // Transcript entries of agent attempts; seq keeps arrival order.
    sql: `
      CREATE TABLE agent_transcripts (
        seq BIGSERIAL PRIMARY KEY,
        run_id TEXT COLLATE "C" NOT NULL,
        activity_id INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        entry TEXT NOT NULL,
        at BIGINT NOT NULL
      );
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
    // Cluster mode (docs/cluster.md): the shard count fixed when the cluster is created, the
    // member nodes with their heartbeat, one lease row per shard (owner, fencing epoch, expiry
    // by the database clock), and the shard of every run and outbox row. Rows written before
    // this migration belong to shard 0.
    sql: `
      CREATE TABLE cluster_meta (
        singleton BOOLEAN PRIMARY KEY DEFAULT true CHECK (singleton),
        shards INTEGER NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
      );
      CREATE TABLE cluster_nodes (
        node_id TEXT COLLATE "C" PRIMARY KEY,
        incarnation BIGINT NOT NULL,
        http_url TEXT NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        heartbeat_at TIMESTAMPTZ NOT NULL
      );
      CREATE TABLE shard_leases (
        shard INTEGER PRIMARY KEY,
        owner TEXT COLLATE "C",
        owner_incarnation BIGINT,
        epoch BIGINT NOT NULL DEFAULT 0,
        expires_at TIMESTAMPTZ NOT NULL DEFAULT 'epoch'
      );
      ALTER TABLE workflow_runs ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE workflow_outbox ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX workflow_runs_live_by_shard ON workflow_runs (shard)
        WHERE status IN ('Running', 'Paused');
      CREATE INDEX workflow_outbox_open_by_shard ON workflow_outbox (shard) WHERE state <> 'done';
    `,
  },
  {
    version: 8,
    name: "workflow_runs_by_start_definition",
    // SQLite migration 8 puts the definition version into the start-time index, so a list
    // filtered by definition reads no run row it does not list. An index scan here reads the
    // heap row of each entry anyway (for visibility), and reads it as cheaply backwards as
    // forwards, so the version only keeps the two lists aligned: no index changes.
    sql: "SELECT 1;",
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

/** Migrates schema `schema` (already validated as a plain identifier) on `client`. */
export async function migrate(
  client: PoolClient,
  schema: string,
  where: string,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number> {
  const latest = migrations.at(-1)?.version ?? 0;
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`skein.migrate.${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`CREATE TABLE IF NOT EXISTS "${schema}".schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at BIGINT NOT NULL
    )`);
    const { rows } = await client.query<{ version: number | null }>(
      `SELECT max(version) AS version FROM "${schema}".schema_migrations`,
    );
    const current = rows[0]?.version ?? 0;
    if (current > latest) {
      throw workflowError(
        "storage_schema_too_new",
        `${where} is at schema version ${current}, newer than this skein knows (${latest}); ` +
          "run a skein at least as new as the one that wrote it",
      );
    }
    await client.query(`SET LOCAL search_path TO "${schema}"`);
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      await client.query(migration.sql);
      await client.query(
        "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
        [migration.version, migration.name, Date.now()],
      );
    }
    await client.query("COMMIT");
    return Math.max(current, latest);
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  }
}
