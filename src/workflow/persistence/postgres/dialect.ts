/**
 * PostgreSQL's side of each difference the shared persistence code names (see
 * `../sql/dialect.ts`).
 */

import type { Dialect, RowsTarget } from "../sql/dialect.ts";
import { run, type Unit } from "../sql/unit.ts";

/** Statement texts with their `?` numbered, by the text as written (a bounded set). */
const numbered = new Map<string, string>();

function numberPlaceholders(sql: string): string {
  let text = numbered.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    numbered.set(sql, text);
  }
  return text;
}

const inserts = new WeakMap<RowsTarget, string>();

function insertSql(target: RowsTarget): string {
  let sql = inserts.get(target);
  if (sql === undefined) {
    const names = target.columns.map((c) => c.name).join(", ");
    const arrays = target.columns.map((c) => `?::${c.type}[]`).join(", ");
    sql = `INSERT INTO ${target.table} (${names}) SELECT * FROM unnest(${arrays}) ${target.tail}`;
    sql = sql.trimEnd();
    inserts.set(target, sql);
  }
  return sql;
}

/** Serialises the transactions naming one key until they end (a transaction advisory lock). */
export const KEY_LOCK = "SELECT pg_advisory_xact_lock(hashtext(?))";

export const POSTGRES: Dialect = {
  name: "postgres",
  placeholders: numberPlaceholders,
  cast: (placeholder, type) => `${placeholder}::${type}`,
  forUpdate: " FOR UPDATE",
  keyLock: KEY_LOCK,
  inList: (column) => `${column} = ANY(?)`,
  list: (values) => values,
  *insertRows(target, rows): Unit<void> {
    if (rows.length === 0) return;
    const columns = target.columns.map((_, i) => rows.map((row) => row[i]) as string[]);
    yield* run(insertSql(target), columns);
  },
  cutsUnionArms: true,
};
