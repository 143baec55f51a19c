/**
 * Worker deployment rows on SQLite: one row per deployment name holding the record as JSON
 * text. A put is an upsert that keeps the first `created_at`; a delete reads and removes the
 * row in one immediate transaction so it can return what it removed.
 */

import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { DeploymentRow, DeploymentStore } from "../store.ts";
import { transaction } from "./database.ts";

interface Row {
  name: string;
  document: string;
  created_at: number;
  updated_at: number;
}

function toRow(row: Row): DeploymentRow {
  return {
    name: row.name,
    document: row.document,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const COLUMNS = "name, document, created_at, updated_at";

export class SqliteDeploymentStore implements DeploymentStore {
  readonly #db: DatabaseSync;
  readonly #get: StatementSync;
  readonly #list: StatementSync;
  readonly #upsert: StatementSync;
  readonly #delete: StatementSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#get = db.prepare(`SELECT ${COLUMNS} FROM worker_deployments WHERE name = ?`);
    this.#list = db.prepare(`SELECT ${COLUMNS} FROM worker_deployments ORDER BY name`);
    this.#upsert = db.prepare(
      "INSERT INTO worker_deployments (name, document, created_at, updated_at) VALUES (?, ?, ?, ?) " +
        "ON CONFLICT (name) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at",
    );
    this.#delete = db.prepare("DELETE FROM worker_deployments WHERE name = ?");
  }

  async get(name: string): Promise<DeploymentRow | undefined> {
    const row = this.#get.get(name) as unknown as Row | undefined;
    return row === undefined ? undefined : toRow(row);
  }

  async list(): Promise<DeploymentRow[]> {
    return (this.#list.all() as unknown as Row[]).map(toRow);
  }

  async put(name: string, document: string, now: number): Promise<DeploymentRow> {
    return transaction(this.#db, () => {
      this.#upsert.run(name, document, now, now);
      return toRow(this.#get.get(name) as unknown as Row);
    });
  }

  async delete(name: string): Promise<DeploymentRow | undefined> {
    return transaction(this.#db, () => {
      const row = this.#get.get(name) as unknown as Row | undefined;
      if (row !== undefined) this.#delete.run(name);
      return row === undefined ? undefined : toRow(row);
    });
  }
}
