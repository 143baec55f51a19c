/**
 * Namespaces on SQLite: one row per namespace, keyed by name. Creation is an
 * `INSERT … ON CONFLICT DO NOTHING` inside an immediate transaction, so two concurrent
 * creates of one name give one `created: true` and one `created: false`.
 */

import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { NamespaceRecord, NamespaceStore, NewNamespace } from "../store.ts";
import { transaction } from "./database.ts";

interface Row {
  name: string;
  created_at: number;
  created_by: string;
  max_in_flight_activities: number | null;
}

function toRecord(row: Row): NamespaceRecord {
  return {
    name: row.name,
    createdAt: row.created_at,
    createdBy: row.created_by,
    maxInFlightActivities: row.max_in_flight_activities,
  };
}

const COLUMNS = "name, created_at, created_by, max_in_flight_activities";

export class SqliteNamespaceStore implements NamespaceStore {
  readonly #db: DatabaseSync;
  readonly #insert: StatementSync;
  readonly #get: StatementSync;
  readonly #list: StatementSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
    // Statements are prepared once: per-call work is binding and stepping only.
    this.#insert = db.prepare(
      "INSERT INTO namespaces (name, created_at, created_by) VALUES (?, ?, ?) " +
        "ON CONFLICT (name) DO NOTHING",
    );
    this.#get = db.prepare(`SELECT ${COLUMNS} FROM namespaces WHERE name = ?`);
    this.#list = db.prepare(`SELECT ${COLUMNS} FROM namespaces ORDER BY name`);
  }

  async create(input: NewNamespace): Promise<{ record: NamespaceRecord; created: boolean }> {
    return transaction(this.#db, () => {
      const { changes } = this.#insert.run(input.name, input.createdAt, input.createdBy);
      const row = this.#get.get(input.name) as unknown as Row;
      return { record: toRecord(row), created: Number(changes) === 1 };
    });
  }

  async get(name: string): Promise<NamespaceRecord | undefined> {
    const row = this.#get.get(name) as unknown as Row | undefined;
    return row === undefined ? undefined : toRecord(row);
  }

  async list(): Promise<NamespaceRecord[]> {
    return (this.#list.all() as unknown as Row[]).map(toRecord);
  }
}
