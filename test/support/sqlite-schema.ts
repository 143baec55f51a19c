// A workflow database that a newer build has migrated: one migration past this build's
// latest is recorded, so opening it must be refused (storage_schema_too_new).

import { DatabaseSync } from "node:sqlite";
import { LATEST_SCHEMA_VERSION } from "../../src/workflow/persistence/sqlite/migrations.ts";
import { SqliteWorkflowStore } from "../../src/workflow/persistence/sqlite/store.ts";

export async function databaseFromTheFuture(file: string): Promise<void> {
  await SqliteWorkflowStore.open(file).close();
  const db = new DatabaseSync(file);
  db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
    LATEST_SCHEMA_VERSION + 1,
    "from the future",
    Date.now(),
  );
  db.close();
}
