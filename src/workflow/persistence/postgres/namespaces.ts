/**
 * Namespaces on PostgreSQL. Creation is `INSERT … ON CONFLICT DO NOTHING` and a read of the
 * row in one transaction: a concurrent create of the same name waits for the first to commit
 * and then reports `created: false`, so exactly one caller sees `created: true`.
 */

import type { Pool } from "pg";
import type { NamespaceRecord, NamespaceStore, NewNamespace } from "../store.ts";

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
}
