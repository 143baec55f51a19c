/**
 * The changes between the version an index holds and the version it must reach, read
 * through changes.list's structural diff page by page. An index is caught up from them,
 * never rebuilt per commit; when the older version is no longer retained, or the diff
 * needs more than changes_node_budget nodes, or it has more rows than the caller will
 * apply at once, there is no diff to apply and the caller rebuilds (or bypasses) instead.
 */

import type { SkeinError } from "../../common/errors.ts";
import type { Store } from "../engine/index.ts";

export interface Change {
  readonly key: string;
  readonly type: "added" | "removed" | "modified";
  readonly from?: unknown;
  readonly to?: unknown;
}

/** Why there is no diff to apply. */
export type NoDiff = "gone" | "too_many";

export function readDiff(
  store: Store,
  where: { collection: string; branch: string },
  from: number,
  to: number,
  most: number,
): Change[] | NoDiff {
  const changes: Change[] = [];
  let cursor: string | undefined;
  try {
    do {
      const page = store.changes({
        ...where,
        fromBranch: undefined,
        from,
        to,
        limit: store.ctx.settings.changesMaxPage,
        cursor,
      });
      changes.push(...page.changes);
      if (changes.length > most) return "too_many";
      cursor = page.cursor ?? undefined;
    } while (cursor !== undefined);
  } catch (error) {
    const code = (error as SkeinError).code;
    if (code === "version_not_found" || code === "changes_node_budget") return "gone";
    throw error;
  }
  return changes;
}
