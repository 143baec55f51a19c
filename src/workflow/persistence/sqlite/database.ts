/**
 * Opening the SQLite database file: WAL journal (readers never block the writer),
 * `synchronous = FULL` (a commit is on disk before it returns, so an acknowledged change
 * survives a crash or power loss), foreign keys on, and a busy timeout so a second
 * connection waits instead of failing. `transaction` runs a unit of work under
 * `BEGIN IMMEDIATE`, taking the write lock up front so read-then-write is never stale.
 */

import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { workflowError } from "../../errors.ts";

export function openDatabase(file: string): DatabaseSync {
  try {
    mkdirSync(dirname(file), { recursive: true });
    const db = new DatabaseSync(file);
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = FULL");
    db.exec("PRAGMA foreign_keys = ON");
    db.exec("PRAGMA busy_timeout = 5000");
    return db;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw workflowError("storage_unavailable", `cannot open ${file}: ${reason}`, error);
  }
}

export function transaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  try {
    const result = work();
    db.exec("COMMIT");
    return result;
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
}
