/**
 * A driver of the row-level store, as the shared domain code holds it: the dialect of its
 * SQL and the two ways it runs units of work (unit.ts). `sqlite/driver.ts` and
 * `postgres/driver.ts` implement it.
 */

import type { Dialect } from "./dialect.ts";
import type { Unit } from "./unit.ts";

/** A driver: runs units, each in a transaction of its own or statement by statement. */
export interface SqlDatabase {
  readonly dialect: Dialect;
  /**
   * Runs the unit as one transaction that holds the write lock from its start (SQLite
   * `BEGIN IMMEDIATE`; on PostgreSQL rows and keys are locked by the unit, see
   * `Dialect.forUpdate` and `Dialect.keyLock`); resolves once it is committed and durable.
   * A statement that throws rolls the transaction back and rejects with its error.
   */
  transaction<T>(unit: () => Unit<T>): Promise<T>;
  /** Runs the unit's statements each on its own (reads, and single-statement writes). */
  autocommit<T>(unit: () => Unit<T>): Promise<T>;
}
