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
  // Version 2 belongs to the workflow-engine branch (see the SQLite list).
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
