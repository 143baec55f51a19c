/**
 * The SQLite backend of the workflow store: one database file per node (WAL, synced commits),
 * migrated to the latest schema when opened. Each domain area is the shared module of
 * `../sql/` over this connection's driver; this class wires them into the `WorkflowStore`
 * interface.
 */

import type { DatabaseSync } from "node:sqlite";
import { SqlDomainStores } from "../sql/domain.ts";
import type { BackupResult, WorkflowStore } from "../store.ts";
import { backupDatabase } from "./backup.ts";
import { openDatabase } from "./database.ts";
import { SqliteDatabase } from "./driver.ts";
import { migrate } from "./migrations.ts";

export class SqliteWorkflowStore extends SqlDomainStores implements WorkflowStore {
  readonly backend = "sqlite";
  readonly schemaVersion: number;
  readonly file: string;
  readonly #db: DatabaseSync;

  private constructor(db: DatabaseSync, file: string, schemaVersion: number) {
    super(new SqliteDatabase(db));
    this.#db = db;
    this.file = file;
    this.schemaVersion = schemaVersion;
  }

  /** Opens (creating when absent) and migrates the database at `file`. */
  static open(file: string): SqliteWorkflowStore {
    const db = openDatabase(file);
    try {
      // Every engine commit syncs the WAL; a checkpoint also syncs the database file. At the
      // default (1000 pages) checkpoints come often enough to double the cost of a step at
      // C = 1 once the database has grown; 10,000 pages halved it (README figures).
      db.exec("PRAGMA wal_autocheckpoint = 10000");
      return new SqliteWorkflowStore(db, file, migrate(db, file));
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /**
   * An online copy of the database at `target` (see backup.ts); `onStep` is told of each
   * step, so calls on this connection can take turns with them (backup-turns.ts).
   */
  backup(target: string, onStep?: () => void): Promise<BackupResult> {
    return backupDatabase(this.#db, target, onStep);
  }

  async close(): Promise<void> {
    if (this.#db.isOpen) this.#db.close();
  }
}
