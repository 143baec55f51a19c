/**
 * Namespaces on SQLite: one row per namespace, keyed by name. Creation is an
 * `INSERT … ON CONFLICT DO NOTHING` inside an immediate transaction, so two concurrent
 * creates of one name give one `created: true` and one `created: false`. A delete checks
 * for runs and removes the row and its definitions in one immediate transaction, so a run
 * committed before it is always seen.
 */

import type { DatabaseSync, StatementSync } from "node:sqlite";
import type {
  NamespaceDeletion,
  NamespaceRecord,
  NamespaceStore,
  NamespaceUsage,
  NewNamespace,
} from "../store.ts";
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
  readonly #runsByStatus: StatementSync;
  readonly #anyRun: StatementSync;
  readonly #countDefinitions: StatementSync;
  readonly #deleteDefinitions: StatementSync;
  readonly #delete: StatementSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
    // Statements are prepared once: per-call work is binding and stepping only.
    this.#insert = db.prepare(
      "INSERT INTO namespaces (name, created_at, created_by) VALUES (?, ?, ?) " +
        "ON CONFLICT (name) DO NOTHING",
    );
    this.#get = db.prepare(`SELECT ${COLUMNS} FROM namespaces WHERE name = ?`);
    this.#list = db.prepare(`SELECT ${COLUMNS} FROM namespaces ORDER BY name`);
    this.#runsByStatus = db.prepare(
      "SELECT status, count(*) AS n FROM workflow_runs WHERE namespace = ? GROUP BY status ORDER BY status",
    );
    this.#anyRun = db.prepare("SELECT count(*) AS n FROM workflow_runs WHERE namespace = ?");
    this.#countDefinitions = db.prepare(
      "SELECT count(*) AS n FROM workflow_definitions WHERE namespace = ?",
    );
    this.#deleteDefinitions = db.prepare("DELETE FROM workflow_definitions WHERE namespace = ?");
    this.#delete = db.prepare("DELETE FROM namespaces WHERE name = ?");
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

  async usage(name: string): Promise<NamespaceUsage> {
    const runs = (this.#runsByStatus.all(name) as { status: string; n: number }[]).map(
      (r) => [r.status, Number(r.n)] as const,
    );
    const { n } = this.#countDefinitions.get(name) as { n: number };
    return { runs, definitions: Number(n) };
  }

  async delete(name: string): Promise<NamespaceDeletion> {
    return transaction(this.#db, () => {
      const row = this.#get.get(name) as unknown as Row | undefined;
      if (row === undefined) return { outcome: "absent" } as const;
      const runs = Number((this.#anyRun.get(name) as { n: number }).n);
      if (runs > 0) return { outcome: "has_runs", runs } as const;
      const { changes } = this.#deleteDefinitions.run(name);
      this.#delete.run(name);
      return { outcome: "deleted", record: toRecord(row), definitions: Number(changes) } as const;
    });
  }
}
