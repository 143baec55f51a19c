/**
 * The PostgreSQL side of start-up migration: the schema's migrations in PostgreSQL's SQL,
 * applied in one transaction under an advisory lock on the schema's name, so two nodes of a
 * cluster starting together migrate once (see `../sql/migrate.ts`).
 */

import { type Migration, migration, migrationsOf } from "../sql/migrate.ts";
import { exec, get } from "../sql/unit.ts";
import { KEY_LOCK } from "./dialect.ts";
import type { PostgresDatabase } from "./driver.ts";

export { LATEST_SCHEMA_VERSION } from "../sql/schema.ts";

export const MIGRATIONS: readonly Migration[] = migrationsOf("postgres");

/** Migrates schema `schema` (already validated as a plain identifier). */
export function migrate(
  db: PostgresDatabase,
  schema: string,
  where: string,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number> {
  return db.transaction(() =>
    migration(db.dialect, migrations, where, function* () {
      yield* get(KEY_LOCK, [`skein.migrate.${schema}`]);
      yield* exec(`CREATE SCHEMA IF NOT EXISTS "${schema}"; SET LOCAL search_path TO "${schema}"`);
    }),
  );
}
