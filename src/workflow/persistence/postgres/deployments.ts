/**
 * Worker deployment rows on PostgreSQL, the same shape as on SQLite: the record as JSON
 * text per name. Each method is one statement (an upsert with RETURNING, a DELETE with
 * RETURNING), so each is its own transaction.
 */

import type { Pool } from "pg";
import type { DeploymentRow, DeploymentStore } from "../store.ts";

interface Row {
  name: string;
  document: string;
  /** BIGINT arrives as text. */
  created_at: string;
  updated_at: string;
}

function toRow(row: Row): DeploymentRow {
  return {
    name: row.name,
    document: row.document,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

const COLUMNS = "name, document, created_at, updated_at";

export class PostgresDeploymentStore implements DeploymentStore {
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  async get(name: string): Promise<DeploymentRow | undefined> {
    const { rows } = await this.#pool.query<Row>(
      `SELECT ${COLUMNS} FROM worker_deployments WHERE name = $1`,
      [name],
    );
    return rows[0] === undefined ? undefined : toRow(rows[0]);
  }

  async list(): Promise<DeploymentRow[]> {
    const { rows } = await this.#pool.query<Row>(
      `SELECT ${COLUMNS} FROM worker_deployments ORDER BY name`,
    );
    return rows.map(toRow);
  }

  async put(name: string, document: string, now: number): Promise<DeploymentRow> {
    const { rows } = await this.#pool.query<Row>(
      "INSERT INTO worker_deployments (name, document, created_at, updated_at) " +
        "VALUES ($1, $2, $3, $3) ON CONFLICT (name) DO UPDATE " +
        `SET document = excluded.document, updated_at = excluded.updated_at RETURNING ${COLUMNS}`,
      [name, document, now],
    );
    return toRow(rows[0]!);
  }

  async delete(name: string): Promise<DeploymentRow | undefined> {
    const { rows } = await this.#pool.query<Row>(
      `DELETE FROM worker_deployments WHERE name = $1 RETURNING ${COLUMNS}`,
      [name],
    );
    return rows[0] === undefined ? undefined : toRow(rows[0]);
  }
}
