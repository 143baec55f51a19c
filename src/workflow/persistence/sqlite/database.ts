/**
 * Opening the SQLite database file: exclusive locking (one node owns the file: a second
 * `skein serve` on the same data is refused at once instead of dispatching the same work
 * twice), WAL journal, `synchronous = FULL` (a commit is on disk before it returns, so an
 * acknowledged change survives a crash or power loss) and foreign keys on. Units of work run
 * under `BEGIN IMMEDIATE` (src/common/sqlite-transaction.ts), taking the write lock up front
 * so read-then-write is never stale.
 */

import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { workflowError } from "../../errors.ts";

export function openDatabase(file: string): DatabaseSync {
  let db: DatabaseSync;
  try {
    mkdirSync(dirname(file), { recursive: true });
    db = new DatabaseSync(file);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw workflowError("storage_unavailable", `cannot open ${file}: ${reason}`, error);
  }
  try {
    // Exclusive before WAL: the WAL index then lives in this process's memory, and the
    // lock, taken by the first transaction below, is held until the connection closes.
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    db.exec("PRAGMA busy_timeout = 0");
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("BEGIN IMMEDIATE");
    db.exec("COMMIT");
    db.exec("PRAGMA synchronous = FULL");
    db.exec("PRAGMA foreign_keys = ON");
    return db;
  } catch (error) {
    db.close();
    const reason = error instanceof Error ? error.message : String(error);
    if (/locked|busy/i.test(reason)) {
      throw workflowError(
        "storage_unavailable",
        `${file} is in use by another process (another skein serve on this data?)`,
        error,
      );
    }
    throw workflowError("storage_unavailable", `cannot open ${file}: ${reason}`, error);
  }
}
