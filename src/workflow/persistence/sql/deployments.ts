/**
 * Worker deployment rows over either backend: one row per deployment name holding the record
 * as JSON text. A put is one upsert that keeps the first `created_at` and returns the row; a
 * delete is one `DELETE … RETURNING`, so it returns what it removed. One statement each, so
 * each is its own transaction.
 */

import type { DeploymentRow, DeploymentStore } from "../store.ts";
import type { SqlDatabase } from "./database.ts";
import { all, get } from "./unit.ts";

interface Row {
  name: string;
  document: string;
  created_at: number | string;
  updated_at: number | string;
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
const PUT =
  "INSERT INTO worker_deployments (name, document, created_at, updated_at) VALUES (?, ?, ?, ?) " +
  "ON CONFLICT (name) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at " +
  `RETURNING ${COLUMNS}`;

export class SqlDeploymentStore implements DeploymentStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  get(name: string): Promise<DeploymentRow | undefined> {
    return this.#db.autocommit(function* () {
      const row = yield* get<Row>(`SELECT ${COLUMNS} FROM worker_deployments WHERE name = ?`, [
        name,
      ]);
      return row === undefined ? undefined : toRow(row);
    });
  }

  list(): Promise<DeploymentRow[]> {
    return this.#db.autocommit(function* () {
      return (yield* all<Row>(`SELECT ${COLUMNS} FROM worker_deployments ORDER BY name`)).map(
        toRow,
      );
    });
  }

  put(name: string, document: string, now: number): Promise<DeploymentRow> {
    return this.#db.autocommit(function* () {
      return toRow((yield* get<Row>(PUT, [name, document, now, now]))!);
    });
  }

  delete(name: string): Promise<DeploymentRow | undefined> {
    return this.#db.autocommit(function* () {
      const row = yield* get<Row>(
        `DELETE FROM worker_deployments WHERE name = ? RETURNING ${COLUMNS}`,
        [name],
      );
      return row === undefined ? undefined : toRow(row);
    });
  }
}
