/**
 * Workflow definitions on PostgreSQL, the same model as on SQLite: one row per (namespace,
 * version); each registration takes the namespace's next `seq` under an advisory
 * transaction lock per namespace, and `seq` orders "latest of a name".
 */

import type { Pool } from "pg";
import {
  DEFINITION_COLUMNS,
  type DefinitionRow,
  type DefinitionSummaryRow,
  listDefinitionsSql,
  toDefinitionRecord,
  toDefinitionSummary,
  versionsSql,
} from "../definition-rows.ts";
import type {
  DefinitionRecord,
  DefinitionStore,
  DefinitionSummary,
  NewDefinition,
} from "../workflows.ts";

export class PostgresDefinitionStore implements DefinitionStore {
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  async register(input: NewDefinition): Promise<{ record: DefinitionRecord; created: boolean }> {
    const client = await this.#pool.connect();
    try {
      await client.query("BEGIN");
      // Registrations in one namespace take their seq one at a time.
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
        `skein.definitions.${input.namespace}`,
      ]);
      const { rows: seqRows } = await client.query<{ seq: string }>(
        "SELECT coalesce(max(seq), 0) + 1 AS seq FROM workflow_definitions WHERE namespace = $1",
        [input.namespace],
      );
      const seq = seqRows[0]!.seq;
      const inserted = await client.query(
        `INSERT INTO workflow_definitions (${DEFINITION_COLUMNS}, seq) VALUES ($1, $2, $3, $4, $5, $6, $7) ` +
          "ON CONFLICT (namespace, version) DO NOTHING",
        [
          input.namespace,
          input.name,
          input.version,
          input.canonical,
          input.registeredAt,
          input.registeredBy,
          seq,
        ],
      );
      const created = inserted.rowCount === 1;
      if (!created) {
        await client.query(
          "UPDATE workflow_definitions SET seq = $1 WHERE namespace = $2 AND version = $3",
          [seq, input.namespace, input.version],
        );
      }
      const { rows } = await client.query<DefinitionRow>(
        `SELECT ${DEFINITION_COLUMNS} FROM workflow_definitions WHERE namespace = $1 AND version = $2`,
        [input.namespace, input.version],
      );
      await client.query("COMMIT");
      return { record: toDefinitionRecord(rows[0]!), created };
    } catch (error) {
      await client.query("ROLLBACK");
      throw error;
    } finally {
      client.release();
    }
  }

  async get(namespace: string, version: string): Promise<DefinitionRecord | undefined> {
    const { rows } = await this.#pool.query<DefinitionRow>(
      `SELECT ${DEFINITION_COLUMNS} FROM workflow_definitions WHERE namespace = $1 AND version = $2`,
      [namespace, version],
    );
    return rows[0] === undefined ? undefined : toDefinitionRecord(rows[0]);
  }

  async latest(namespace: string, name: string): Promise<DefinitionRecord | undefined> {
    const { rows } = await this.#pool.query<DefinitionRow>(
      `SELECT ${DEFINITION_COLUMNS} FROM workflow_definitions WHERE namespace = $1 AND name = $2 ` +
        "ORDER BY seq DESC LIMIT 1",
      [namespace, name],
    );
    return rows[0] === undefined ? undefined : toDefinitionRecord(rows[0]);
  }

  async list(namespace: string): Promise<DefinitionSummary[]> {
    const { rows } = await this.#pool.query<DefinitionSummaryRow>(listDefinitionsSql("$1", "$1"), [
      namespace,
    ]);
    return rows.map(toDefinitionSummary);
  }

  async versions(namespace: string, name: string): Promise<DefinitionRecord[]> {
    const { rows } = await this.#pool.query<DefinitionRow>(versionsSql("$1", "$2"), [
      namespace,
      name,
    ]);
    return rows.map(toDefinitionRecord);
  }
}
