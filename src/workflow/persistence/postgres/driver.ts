/**
 * The PostgreSQL driver of the shared persistence code (see `../sql/unit.ts`): a transaction
 * takes a pooled connection, sends `BEGIN`, each statement of the unit as it is yielded, and
 * `COMMIT` (synchronous commit, the server default, so a resolved write is durable), or
 * `ROLLBACK` when a statement fails; statements outside a transaction go to the pool one by
 * one. Placeholders are numbered by the dialect.
 */

import type { Pool, PoolClient } from "pg";
import type { SqlDatabase } from "../sql/database.ts";
import type { Statement, Unit } from "../sql/unit.ts";
import { POSTGRES } from "./dialect.ts";

export class PostgresDatabase implements SqlDatabase {
  readonly dialect = POSTGRES;
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  transaction<T>(unit: () => Unit<T>): Promise<T> {
    return inTransaction(this.#pool, (client) => drive(client, unit()));
  }

  autocommit<T>(unit: () => Unit<T>): Promise<T> {
    return drive(this.#pool, unit());
  }
}

async function drive<T>(on: Pool | PoolClient, work: Unit<T>): Promise<T> {
  let step = work.next();
  while (!step.done) step = work.next(await execute(on, step.value));
  return step.value;
}

async function execute(on: Pool | PoolClient, statement: Statement): Promise<unknown> {
  if (statement.kind === "exec") {
    await on.query(statement.sql);
    return undefined;
  }
  const text = POSTGRES.placeholders(statement.sql);
  if (statement.kind === "each") {
    let changes = 0;
    for (const row of statement.rows) changes += (await on.query(text, [...row])).rowCount ?? 0;
    return changes;
  }
  const result = await on.query(text, [...statement.params]);
  if (statement.kind === "all") return result.rows;
  if (statement.kind === "get") return result.rows[0];
  return result.rowCount ?? 0;
}

/**
 * Runs `work` on one pooled connection inside BEGIN … COMMIT; a failure rolls back and
 * rejects with the work's error. The connection goes back to the pool either way.
 */
export async function inTransaction<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const value = await work(client);
    await client.query("COMMIT");
    return value;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
