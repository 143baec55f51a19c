/**
 * The SQLite driver of the shared persistence code (see `../sql/unit.ts`): it answers a unit's
 * statements synchronously on the one connection, from statements prepared once per SQL text,
 * so a unit runs from its first statement to its commit without yielding to the event loop
 * (no other call can interleave inside its transaction) and the per-statement work stays
 * binding and stepping. The promise-returning methods only wrap that synchronous run; start-up
 * migration uses `transactionSync` directly.
 */

import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import { transaction } from "../../../common/sqlite-transaction.ts";
import type { SqlDatabase } from "../sql/database.ts";
import type { Statement, Unit } from "../sql/unit.ts";
import { SQLITE } from "./dialect.ts";

export class SqliteDatabase implements SqlDatabase {
  readonly dialect = SQLITE;
  readonly #db: DatabaseSync;
  /** Prepared statements by SQL text: the texts are constants and list shapes, a bounded set. */
  readonly #prepared = new Map<string, StatementSync>();

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  async transaction<T>(unit: () => Unit<T>): Promise<T> {
    return this.transactionSync(unit);
  }

  async autocommit<T>(unit: () => Unit<T>): Promise<T> {
    return this.#drive(unit());
  }

  /** The unit in one `BEGIN IMMEDIATE` transaction, run to its commit before returning. */
  transactionSync<T>(unit: () => Unit<T>): T {
    return transaction(this.#db, () => this.#drive(unit()));
  }

  #drive<T>(work: Unit<T>): T {
    let step = work.next();
    while (!step.done) step = work.next(this.#execute(step.value));
    return step.value;
  }

  #execute(statement: Statement): unknown {
    if (statement.kind === "exec") {
      this.#db.exec(statement.sql);
      return undefined;
    }
    let prepared = this.#prepared.get(statement.sql);
    if (prepared === undefined) {
      prepared = this.#db.prepare(statement.sql);
      this.#prepared.set(statement.sql, prepared);
    }
    if (statement.kind === "each") {
      let changes = 0;
      for (const row of statement.rows) {
        changes += Number(prepared.run(...(row as SQLInputValue[])).changes);
      }
      return changes;
    }
    const params = statement.params as SQLInputValue[];
    if (statement.kind === "all") return prepared.all(...params);
    if (statement.kind === "get") return prepared.get(...params);
    return Number(prepared.run(...params).changes);
  }
}
