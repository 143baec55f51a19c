/**
 * SQLite's side of each difference the shared persistence code names (see `../sql/dialect.ts`).
 */

import type { Dialect, RowsTarget } from "../sql/dialect.ts";
import { runEach, type Unit } from "../sql/unit.ts";

/** Each target's statement, built once: the same text finds the same prepared statement. */
const inserts = new WeakMap<RowsTarget, string>();

function insertSql(target: RowsTarget): string {
  let sql = inserts.get(target);
  if (sql === undefined) {
    const names = target.columns.map((c) => c.name).join(", ");
    const marks = target.columns.map(() => "?").join(", ");
    sql = `INSERT INTO ${target.table} (${names}) VALUES (${marks}) ${target.tail}`.trimEnd();
    inserts.set(target, sql);
  }
  return sql;
}

export const SQLITE: Dialect = {
  name: "sqlite",
  placeholders: (sql) => sql,
  cast: (placeholder) => placeholder,
  forUpdate: "",
  keyLock: undefined,
  inList: (column) => `${column} IN (SELECT value FROM json_each(?))`,
  list: (values) => JSON.stringify(values),
  *insertRows(target, rows): Unit<void> {
    yield* runEach(insertSql(target), rows);
  },
  cutsUnionArms: false,
};
