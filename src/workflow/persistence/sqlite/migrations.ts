/**
 * The SQLite side of start-up migration: the schema's migrations in SQLite's SQL, applied
 * synchronously under `BEGIN IMMEDIATE` when the database is opened (see `../sql/migrate.ts`).
 */

import type { DatabaseSync } from "node:sqlite";
import { type Migration, migration, migrationsOf } from "../sql/migrate.ts";
import { SqliteDatabase } from "./driver.ts";

export { LATEST_SCHEMA_VERSION } from "../sql/schema.ts";

export const MIGRATIONS: readonly Migration[] = migrationsOf("sqlite");

/** Brings the schema of the database at `file` up to date; returns the resulting version. */
export function migrate(
  db: DatabaseSync,
  file: string,
  migrations: readonly Migration[] = MIGRATIONS,
): number {
  const driver = new SqliteDatabase(db);
  return driver.transactionSync(() => migration(driver.dialect, migrations, file));
}
