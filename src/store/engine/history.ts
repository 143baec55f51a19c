/**
 * history.list: a branch's retained versions newest first (the head, the previous heads in
 * the branch record, then history rows), as receipts, paged by version. `before` is a ref:
 * a number (a page's `next`) is taken as it is, retained or not; a name (branch head,
 * `branch@version`, tag) is resolved, so "the history of main before the tag v1" or
 * "before agent-7's head" is one request.
 */

import type { VersionRecord } from "../codec/records.ts";
import { type Receipt, receiptOf } from "./commit.ts";
import type { StoreContext } from "./context.ts";
import { pageOf } from "./paging.ts";
import { type Ref, resolveRef } from "./refs.ts";
import { loadBranch } from "./versions.ts";

/** Retained versions of a branch, newest first, strictly below `before` when given. */
export function* versionsOf(
  ctx: StoreContext,
  collection: string,
  branch: string,
  before?: number,
): Generator<VersionRecord> {
  const record = loadBranch(ctx, collection, branch);
  for (const version of [record.head, ...record.kept]) {
    if (before === undefined || version.version < before) yield version;
  }
  const oldestInRecord = [record.head, ...record.kept].at(-1)!.version;
  const below = Math.min(before ?? Number.MAX_SAFE_INTEGER, oldestInRecord);
  yield* ctx.db.history
    .getRange({
      start: [collection, branch, below],
      end: [collection, branch, -1],
      reverse: true,
    })
    .map(({ value }) => value)
    .filter((v) => v.version < below);
}

export function listHistory(
  ctx: StoreContext,
  collection: string,
  branch: string,
  before: Ref | undefined,
  limit: number,
): HistoryPage {
  // A number is a page cursor (the version need not be retained); a name is a ref.
  const below =
    typeof before === "string"
      ? resolveRef(ctx, collection, branch, before).version.version
      : before;
  const rows: Receipt[] = [];
  for (const version of versionsOf(ctx, collection, branch, below)) {
    rows.push(receiptOf(version));
    if (rows.length > limit) break;
  }
  const page = pageOf(rows, limit, (r) => String(r.version));
  return { rows: page.rows, next: page.next === null ? null : Number(page.next) };
}

/** A page of receipts; `next` is the version to pass as `before` for the next page. */
export interface HistoryPage {
  readonly rows: Receipt[];
  readonly next: number | null;
}
