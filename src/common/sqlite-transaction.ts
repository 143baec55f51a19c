/**
 * One write transaction on a node:sqlite connection, for the two programs that keep SQLite
 * files (the workflow server's storage and skein-idp's state). `BEGIN IMMEDIATE` takes the
 * database's write lock at the start, so a transaction never fails half-way for want of it;
 * a throw rolls back and rethrows.
 */

import type { DatabaseSync } from "node:sqlite";

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
