/**
 * Namespaces over either backend: one row per namespace, keyed by name. Creation is an
 * `INSERT … ON CONFLICT DO NOTHING` and a read of the row in one transaction, so two
 * concurrent creates of one name give one `created: true` and one `created: false` (SQLite
 * serialises the two transactions; on PostgreSQL the second insert waits for the first to
 * commit). A delete reads the row for update, checks for runs and removes the row and its
 * definitions in one transaction, so a run committed before it is always seen.
 */

import type {
  NamespaceDeletion,
  NamespaceRecord,
  NamespaceStore,
  NamespaceUsage,
  NewNamespace,
} from "../store.ts";
import type { SqlDatabase } from "./database.ts";
import { all, get, run, type Unit } from "./unit.ts";

interface Row {
  name: string;
  created_at: number | string;
  created_by: string;
  max_in_flight_activities: number | null;
}

function toRecord(row: Row): NamespaceRecord {
  return {
    name: row.name,
    createdAt: Number(row.created_at),
    createdBy: row.created_by,
    maxInFlightActivities: row.max_in_flight_activities,
  };
}

const COLUMNS = "name, created_at, created_by, max_in_flight_activities";
const INSERT =
  "INSERT INTO namespaces (name, created_at, created_by) VALUES (?, ?, ?) " +
  "ON CONFLICT (name) DO NOTHING";
const GET = `SELECT ${COLUMNS} FROM namespaces WHERE name = ?`;
const LIST = `SELECT ${COLUMNS} FROM namespaces ORDER BY name`;
const RUNS_BY_STATUS =
  "SELECT status, count(*) AS n FROM workflow_runs WHERE namespace = ? GROUP BY status ORDER BY status";
const RUNS = "SELECT count(*) AS n FROM workflow_runs WHERE namespace = ?";
const DEFINITIONS = "SELECT count(*) AS n FROM workflow_definitions WHERE namespace = ?";

export class SqlNamespaceStore implements NamespaceStore {
  readonly #db: SqlDatabase;
  readonly #getForUpdate: string;

  constructor(db: SqlDatabase) {
    this.#db = db;
    this.#getForUpdate = GET + db.dialect.forUpdate;
  }

  create(input: NewNamespace): Promise<{ record: NamespaceRecord; created: boolean }> {
    return this.#db.transaction(function* () {
      const created = (yield* run(INSERT, [input.name, input.createdAt, input.createdBy])) === 1;
      const row = (yield* get<Row>(GET, [input.name]))!;
      return { record: toRecord(row), created };
    });
  }

  get(name: string): Promise<NamespaceRecord | undefined> {
    return this.#db.autocommit(function* () {
      const row = yield* get<Row>(GET, [name]);
      return row === undefined ? undefined : toRecord(row);
    });
  }

  list(): Promise<NamespaceRecord[]> {
    return this.#db.autocommit(function* () {
      return (yield* all<Row>(LIST)).map(toRecord);
    });
  }

  usage(name: string): Promise<NamespaceUsage> {
    return this.#db.autocommit(function* () {
      const byStatus = yield* all<{ status: string; n: number | string }>(RUNS_BY_STATUS, [name]);
      const definitions = yield* get<{ n: number | string }>(DEFINITIONS, [name]);
      return {
        runs: byStatus.map((r) => [r.status, Number(r.n)] as const),
        definitions: Number(definitions!.n),
      };
    });
  }

  delete(name: string): Promise<NamespaceDeletion> {
    const getForUpdate = this.#getForUpdate;
    return this.#db.transaction(function* (): Unit<NamespaceDeletion> {
      const row = yield* get<Row>(getForUpdate, [name]);
      if (row === undefined) return { outcome: "absent" };
      const runs = Number((yield* get<{ n: number | string }>(RUNS, [name]))!.n);
      if (runs > 0) return { outcome: "has_runs", runs };
      const definitions = yield* run("DELETE FROM workflow_definitions WHERE namespace = ?", [
        name,
      ]);
      yield* run("DELETE FROM namespaces WHERE name = ?", [name]);
      return { outcome: "deleted", record: toRecord(row), definitions };
    });
  }
}
