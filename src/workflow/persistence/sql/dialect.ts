/**
 * Where the SQL of the two backends differs, each difference named once. The shared domain
 * code (`sql/*.ts`) writes one statement for both wherever the SQL is the same (upserts are
 * `ON CONFLICT … DO UPDATE SET x = excluded.x` and `RETURNING` works on both) and asks its
 * driver's dialect for the rest; no other module tests which backend it runs on. The values
 * are `sqlite/dialect.ts` and `postgres/dialect.ts`.
 *
 * The schema's DDL differs too (column types, STRICT tables, collation): each migration holds
 * each backend's text side by side in `schema.ts`. What is not here because the shared code
 * absorbs it: integer columns read back as numbers on
 * SQLite and as strings on PostgreSQL (BIGINT and `count(*)`; node-postgres does not guess at
 * 64-bit values), so every row decoder takes `Number(…)` of both; and JSON lives in TEXT
 * columns on both, as written, never as a JSON or binary type.
 */

import type { Param, Unit } from "./unit.ts";

/** A column of a multi-row insert, with its PostgreSQL type (for `unnest`). */
export interface Column {
  readonly name: string;
  readonly type: "text" | "int" | "bigint";
}

/** Where a multi-row insert writes: table, columns, and what follows (`ON CONFLICT …`). */
export interface RowsTarget {
  readonly table: string;
  readonly columns: readonly Column[];
  /** Appended to the insert (a conflict clause), or "". */
  readonly tail: string;
}

export interface Dialect {
  readonly name: "sqlite" | "postgres";
  /** The text sent for a statement written with `?` placeholders (PostgreSQL numbers them). */
  placeholders(sql: string): string;
  /** A placeholder typed for a row-value comparison (PostgreSQL needs the type stated). */
  cast(placeholder: string, type: "bigint" | "text"): string;
  /**
   * Appended to a SELECT whose rows the transaction goes on to change or delete: PostgreSQL
   * locks them (` FOR UPDATE`); SQLite's `BEGIN IMMEDIATE` already holds the database's one
   * write lock, so nothing.
   */
  readonly forUpdate: string;
  /**
   * A statement taking one text parameter that serialises the transactions naming the same
   * key until they end (PostgreSQL: a transaction advisory lock), or undefined where every
   * writing transaction is serialised anyway (SQLite).
   */
  readonly keyLock: string | undefined;
  /** `column` is one of a list bound as one parameter (`list(values)`). */
  inList(column: string): string;
  /** The parameter `inList` takes: a PostgreSQL array, or JSON text SQLite reads with `json_each`. */
  list(values: readonly string[]): Param;
  /**
   * Inserts `rows` (each in `target.columns` order) with a constant number of statements on
   * PostgreSQL (one, from arrays with `unnest`: a round trip costs more than a row), and one
   * prepared statement stepped per row on SQLite (a step costs less than building arrays).
   */
  insertRows(target: RowsTarget, rows: readonly (readonly Param[])[]): Unit<void>;
  /**
   * Whether each arm of a merged list (`UNION ALL` of index ranges) is cut at the page's size
   * itself: SQLite merges plain arms in index order, reading each only as far as the page
   * needs; PostgreSQL may append and sort instead, so there each arm carries `ORDER BY … LIMIT`.
   */
  readonly cutsUnionArms: boolean;
}
