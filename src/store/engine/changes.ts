/**
 * changes.list: the changes between two versions of a collection (any two refs, on one
 * branch or across branches: `from: "main", to: "agent-7"`), by structural
 * diff of each shard's trees, in (shard, key) order. Bounds, each a refusal or a page end:
 * a request above changes_max_page is `page_limit`; one shard diff loading more than
 * changes_node_budget nodes in a call is `changes_node_budget`; a page ends after `limit`
 * rows or changes_scan_records changes examined, with a cursor to continue.
 */

import { decodeItem } from "../codec/json-value.ts";
import { storeError } from "../errors.ts";
import { NodeBudgetExceeded, TreeDiff } from "../tree/diff.ts";
import type { StoreContext } from "./context.ts";
import { checkPage } from "./paging.ts";
import { type Ref, resolveRef } from "./refs.ts";

export interface ChangeRow {
  readonly key: string;
  readonly type: "added" | "removed" | "modified";
  readonly from?: unknown;
  readonly to?: unknown;
}

export interface ChangesRequest {
  readonly collection: string;
  readonly branch: string;
  /** The older side's branch (default: `branch`). */
  readonly fromBranch: string | undefined;
  /** A ref; a number is a version of `fromBranch`. */
  readonly from: Ref;
  /** A ref (default: the branch head); a number is a version of `branch`. */
  readonly to: Ref | undefined;
  readonly limit: number;
  readonly cursor: string | undefined;
}

interface Cursor {
  readonly shard: number;
  readonly after: string;
  readonly from: number;
  readonly to: number;
}

export function listChanges(
  ctx: StoreContext,
  request: ChangesRequest,
): { changes: ChangeRow[]; from: number; to: number; cursor: string | null; nodes_loaded: number } {
  const { settings } = ctx;
  checkPage(request.limit, settings.changesMaxPage, "changes_max_page");
  const from = resolveRef(
    ctx,
    request.collection,
    request.fromBranch ?? request.branch,
    request.from,
  ).version;
  const to = resolveRef(ctx, request.collection, request.branch, request.to).version;
  let shard = 0;
  let after: string | null = null;
  if (request.cursor !== undefined) {
    const cursor = readCursor(request.cursor);
    if (cursor.from !== from.version || cursor.to !== to.version || cursor.shard >= ctx.shards) {
      throw storeError("invalid_cursor", "the cursor belongs to another changes.list");
    }
    shard = cursor.shard;
    after = cursor.after;
  }
  const changes: ChangeRow[] = [];
  let examined = 0;
  let loaded = 0;
  for (; shard < ctx.shards; shard++, after = null) {
    const diff = new TreeDiff(
      ctx.readers[shard]!,
      from.roots[shard] ?? null,
      to.roots[shard] ?? null,
      {
        after,
        budget: settings.changesNodeBudget,
      },
    );
    try {
      for (let change = diff.next(); change !== undefined; change = diff.next()) {
        examined++;
        changes.push({
          key: change.key,
          type: change.type,
          ...(change.from === undefined ? {} : { from: decodeItem(change.from) }),
          ...(change.to === undefined ? {} : { to: decodeItem(change.to) }),
        });
        if (changes.length >= request.limit || examined >= settings.changesScanRecords) {
          loaded += diff.loaded;
          const next: Cursor = { shard, after: change.key, from: from.version, to: to.version };
          return {
            changes,
            from: from.version,
            to: to.version,
            cursor: writeCursor(next),
            nodes_loaded: loaded,
          };
        }
      }
    } catch (error) {
      throw nodeBudgetRefusal(error, `the diff of shard ${shard}`);
    }
    loaded += diff.loaded;
  }
  return { changes, from: from.version, to: to.version, cursor: null, nodes_loaded: loaded };
}

/**
 * `error` as the refusal a caller sees when it is a tree walk over changes_node_budget
 * (`what` names the walk: "the diff of shard 2"); any other error unchanged.
 */
export function nodeBudgetRefusal(error: unknown, what: string): unknown {
  if (!(error instanceof NodeBudgetExceeded)) return error;
  return storeError(
    "changes_node_budget",
    `${what} needed more than changes_node_budget (${error.budget}) nodes`,
  );
}

function writeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.shard, cursor.after, cursor.from, cursor.to])).toString(
    "base64url",
  );
}

function readCursor(text: string): Cursor {
  try {
    const [shard, after, from, to] = JSON.parse(
      Buffer.from(text, "base64url").toString("utf8"),
    ) as unknown[];
    if (
      Number.isSafeInteger(shard) &&
      typeof after === "string" &&
      Number.isSafeInteger(from) &&
      Number.isSafeInteger(to)
    ) {
      return { shard: shard as number, after, from: from as number, to: to as number };
    }
  } catch {
    // Falls through to the refusal: any undecodable cursor is refused the same way.
  }
  throw storeError("invalid_cursor", "the cursor was not issued by changes.list");
}
