/**
 * Workflow definitions on SQLite: one row per (namespace, version), the version being the
 * content hash of the canonical document, so registering the same document twice stores it
 * once. Every registration takes the next `seq`, which is what "latest of a name" orders by.
 */

import type { DatabaseSync, StatementSync } from "node:sqlite";
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
import { transaction } from "./database.ts";

export class SqliteDefinitionStore implements DefinitionStore {
  readonly #db: DatabaseSync;
  readonly #insert: StatementSync;
  readonly #touch: StatementSync;
  readonly #get: StatementSync;
  readonly #latest: StatementSync;
  readonly #nextSeq: StatementSync;
  readonly #list: StatementSync;
  readonly #versions: StatementSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
    const sql = definitionSql(() => "?");
    this.#nextSeq = db.prepare(sql.nextSeq);
    this.#insert = db.prepare(sql.insert);
    this.#touch = db.prepare(sql.touch);
    this.#get = db.prepare(sql.get);
    this.#latest = db.prepare(sql.latest);
    this.#list = db.prepare(sql.list);
    this.#versions = db.prepare(sql.versions);
  }

  async register(input: NewDefinition): Promise<{ record: DefinitionRecord; created: boolean }> {
    return transaction(this.#db, () => {
      const { seq } = this.#nextSeq.get(input.namespace) as { seq: number };
      const { changes } = this.#insert.run(...insertParams(input, seq));
      const created = Number(changes) === 1;
      if (!created) this.#touch.run(seq, input.namespace, input.version);
      const row = this.#get.get(input.namespace, input.version) as unknown as DefinitionRow;
      return { record: toDefinitionRecord(row), created };
    });
  }

  async get(namespace: string, version: string): Promise<DefinitionRecord | undefined> {
    const row = this.#get.get(namespace, version) as unknown as DefinitionRow | undefined;
    return row === undefined ? undefined : toDefinitionRecord(row);
  }

  async latest(namespace: string, name: string): Promise<DefinitionRecord | undefined> {
    const row = this.#latest.get(namespace, name) as unknown as DefinitionRow | undefined;
    return row === undefined ? undefined : toDefinitionRecord(row);
  }

  async list(namespace: string): Promise<DefinitionSummary[]> {
    return (this.#list.all(namespace, namespace) as unknown as DefinitionSummaryRow[]).map(
      toDefinitionSummary,
    );
  }

  async versions(namespace: string, name: string): Promise<DefinitionRecord[]> {
    return (this.#versions.all(namespace, name) as unknown as DefinitionRow[]).map(
      toDefinitionRecord,
    );
  }
}
