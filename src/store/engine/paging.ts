/**
 * Pages of rows. A verb fetches one row more than asked; `pageOf` keeps `limit` rows and
 * names the cursor to continue from (null on the last page).
 */

import type { Database } from "lmdb";
import { storeError } from "../errors.ts";
import type { StoreContext } from "./context.ts";

export interface Page<T> {
  readonly rows: T[];
  readonly next: string | null;
}

export function pageOf<T>(rows: T[], limit: number, cursor: (row: T) => string): Page<T> {
  if (rows.length <= limit) return { rows, next: null };
  const kept = rows.slice(0, limit);
  return { rows: kept, next: cursor(kept[kept.length - 1]!) };
}

/** Refuses a requested page above `max` with `page_limit`, naming the setting. */
export function checkPage(limit: number, max: number, setting: string): void {
  if (limit > max) {
    throw storeError("page_limit", `limit ${limit} is above ${setting} (${max})`);
  }
}

/**
 * A page of a collection's named rows (branches, tags: keyed `[collection, name]`), in
 * name order after `after`. Two rows more than the limit are read: `after` itself, if it
 * still exists, and the one that says there is a next page.
 */
export function namedPage<V extends { readonly name: string }, R extends { readonly name: string }>(
  ctx: StoreContext,
  table: Database<V, [string, string]>,
  query: {
    readonly collection: string;
    readonly after: string | undefined;
    readonly limit: number;
  },
  row: (value: V) => R,
): Page<R> {
  const { collection, after, limit } = query;
  if (ctx.db.collections.get(collection) === undefined) {
    throw storeError("collection_not_found", `no collection ${JSON.stringify(collection)}`);
  }
  const rows: R[] = [];
  const range = table.getRange({
    start: [collection, after ?? ""],
    end: [collection, "\uffff"],
    limit: limit + 2,
  });
  for (const { value } of range) {
    if (after !== undefined && value.name <= after) continue;
    rows.push(row(value));
  }
  return pageOf(rows.slice(0, limit + 1), limit, (r) => r.name);
}
