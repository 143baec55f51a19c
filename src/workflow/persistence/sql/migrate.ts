/**
 * Applying the schema (`schema.ts`) on either backend, as one unit run in one transaction at
 * start-up: each migration not yet recorded in `schema_migrations` (version, name, time) is
 * applied and recorded; the database's schema version is the highest recorded one. A database
 * whose version is higher than the last migration known here was written by a newer Skein:
 * start-up refuses it (`storage_schema_too_new`) rather than run on a schema it does not know.
 */

import { workflowError } from "../../errors.ts";
import type { Dialect } from "./dialect.ts";
import { MIGRATIONS_TABLE, SCHEMA } from "./schema.ts";
import { exec, get, run, type Unit } from "./unit.ts";

/** One migration as a backend applies it. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** The schema's migrations in one backend's SQL. */
export function migrationsOf(dialect: Dialect["name"]): readonly Migration[] {
  return SCHEMA.map(({ version, name, sql }) => ({
    version,
    name,
    sql: typeof sql === "string" ? sql : sql[dialect],
  }));
}

/**
 * Brings the schema up to date; returns the resulting version. `where` names the database in
 * a refusal; `prepare` runs first in the transaction (PostgreSQL: lock and select the schema).
 */
export function* migration(
  dialect: Dialect,
  migrations: readonly Migration[],
  where: string,
  prepare?: () => Unit<void>,
): Unit<number> {
  const latest = migrations.at(-1)?.version ?? 0;
  if (prepare !== undefined) yield* prepare();
  yield* exec(MIGRATIONS_TABLE[dialect.name]);
  const row = yield* get<{ version: number | null }>(
    "SELECT max(version) AS version FROM schema_migrations",
  );
  const current = row?.version ?? 0;
  if (current > latest) {
    throw workflowError(
      "storage_schema_too_new",
      `${where} is at schema version ${current}, newer than this skein knows (${latest}); ` +
        "run a skein at least as new as the one that wrote it",
    );
  }
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    yield* exec(migration.sql);
    yield* run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [
      migration.version,
      migration.name,
      Date.now(),
    ]);
  }
  return Math.max(current, latest);
}
