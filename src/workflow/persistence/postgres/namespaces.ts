/**
 * Namespaces on PostgreSQL. Creation is `INSERT … ON CONFLICT DO NOTHING` and a read of the
 * row in one transaction: a concurrent create of the same name waits for the first to commit
 * and then reports `created: false`, so exactly one caller sees `created: true`. A delete
 * locks the namespace row, checks for runs and removes the row and its definitions in one
 * transaction.
 */

import type { Pool } from "pg";
import type {
  NamespaceDeletion,
  NamespaceRecord,
  NamespaceStore,
  NamespaceUsage,
  NewNamespace,
} from "../store.ts";

interface Row {
  name: string;
  /** BIGINT arrives as text: node-postgres does not guess at 64-bit values. */
  created_at: string;
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

export class PostgresNamespaceStore implements NamespaceStore {
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  async create(input: NewNamespace): Promise<{ record: NamespaceRecord; created: boolean }> {
    const client = await this.#pool.connect();
    try {
      await client.query("BEGIN");
      const inserted = await client.query(
        "INSERT INTO namespaces (name, created_at, created_by) VALUES ($1, $2, $3) " +
          "ON CONFLICT (name) DO NOTHING",
        [input.name, input.createdAt, input.createdBy],
      );
      const { rows } = await client.query<Row>(
        `SELECT ${COLUMNS} FROM namespaces WHERE name = $1`,
        [input.name],
      );
      await client.query("COMMIT");
      return { record: toRecord(rows[0]!), created: inserted.rowCount === 1 };
    } catch (error) {
      await client.query("ROLLBACK");
      throw error;
    } finally {
      client.release();
    }
  }

  async get(name: string): Promise<NamespaceRecord | undefined> {
    const { rows } = await this.#pool.query<Row>(
      `SELECT ${COLUMNS} FROM namespaces WHERE name = $1`,
      [name],
    );
    return rows[0] === undefined ? undefined : toRecord(rows[0]);
  }

  async list(): Promise<NamespaceRecord[]> {
    const { rows } = await this.#pool.query<Row>(`SELECT ${COLUMNS} FROM namespaces ORDER BY name`);
    return rows.map(toRecord);
  }

  async usage(name: string): Promise<NamespaceUsage> {
    const [byStatus, definitions] = await Promise.all([
      this.#pool.query<{ status: string; n: string }>(
        "SELECT status, count(*) AS n FROM workflow_runs WHERE namespace = $1 GROUP BY status ORDER BY status",
        [name],
      ),
      this.#pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM workflow_definitions WHERE namespace = $1",
        [name],
      ),
    ]);
    return {
      runs: byStatus.rows.map((r) => [r.status, Number(r.n)] as const),
      definitions: Number(definitions.rows[0]!.n),
    };
  }

  async delete(name: string): Promise<NamespaceDeletion> {
    const client = await this.#pool.connect();
    try {
      await client.query("BEGIN");
      const { rows } = await client.query<Row>(
        `SELECT ${COLUMNS} FROM namespaces WHERE name = $1 FOR UPDATE`,
        [name],
      );
      let result: NamespaceDeletion;
      if (rows[0] === undefined) {
        result = { outcome: "absent" };
      } else {
        const runs = await client.query<{ n: string }>(
          "SELECT count(*) AS n FROM workflow_runs WHERE namespace = $1",
          [name],
        );
        const n = Number(runs.rows[0]!.n);
        if (n > 0) {
          result = { outcome: "has_runs", runs: n };
        } else {
          const removed = await client.query(
            "DELETE FROM workflow_definitions WHERE namespace = $1",
            [name],
          );
          await client.query("DELETE FROM namespaces WHERE name = $1", [name]);
          result = {
            outcome: "deleted",
            record: toRecord(rows[0]),
            definitions: removed.rowCount ?? 0,
          };
        }
      }
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK");
      throw error;
    } finally {
      client.release();
    }
  }
}
