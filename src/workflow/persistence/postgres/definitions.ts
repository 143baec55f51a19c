/**
 * Workflow definitions on PostgreSQL, the same model as on SQLite: one row per (namespace,
 * version); each registration takes the namespace's next `seq` under an advisory
 * transaction lock per namespace, and `seq` orders "latest of a name".
 */

import type { Pool } from "pg";
import {
  type DefinitionRow,
  type DefinitionSummaryRow,
  definitionSql,
  insertParams,
  toDefinitionRecord,
  toDefinitionSummary,
} from "../definition-rows.ts";
import type {
  DefinitionRecord,
  DefinitionStore,
  DefinitionSummary,
  NewDefinition,
} from "../workflows.ts";

const SQL = definitionSql((n) => `$${n}`);

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
      const { rows: seqRows } = await client.query<{ seq: string }>(SQL.nextSeq, [input.namespace]);
      const seq = seqRows[0]!.seq;
      const inserted = await client.query(SQL.insert, insertParams(input, seq));
      const created = inserted.rowCount === 1;
      if (!created) {
        await client.query(SQL.touch, [seq, input.namespace, input.version]);
      }
      const { rows } = await client.query<DefinitionRow>(SQL.get, [input.namespace, input.version]);
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
    const { rows } = await this.#pool.query<DefinitionRow>(SQL.get, [namespace, version]);
    return rows[0] === undefined ? undefined : toDefinitionRecord(rows[0]);
  }

  async latest(namespace: string, name: string): Promise<DefinitionRecord | undefined> {
    const { rows } = await this.#pool.query<DefinitionRow>(SQL.latest, [namespace, name]);
    return rows[0] === undefined ? undefined : toDefinitionRecord(rows[0]);
  }

  async list(namespace: string): Promise<DefinitionSummary[]> {
    const { rows } = await this.#pool.query<DefinitionSummaryRow>(SQL.list, [namespace]);
    return rows.map(toDefinitionSummary);
  }

  async versions(namespace: string, name: string): Promise<DefinitionRecord[]> {
    const { rows } = await this.#pool.query<DefinitionRow>(SQL.versions, [namespace, name]);
    return rows.map(toDefinitionRecord);
  }
}
