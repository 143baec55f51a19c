/**
 * Pages of rows. A verb fetches one row more than asked; `pageOf` keeps `limit` rows and
 * names the cursor to continue from (null on the last page).
 */

import { storeError } from "../errors.ts";

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
