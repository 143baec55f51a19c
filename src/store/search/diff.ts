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
  const pages = diffPages(store, where, from, to, most);
  for (;;) {
    const step = pages.next();
    if (step.done) return step.value;
  }
}

/**
 * The same diff, read a page at a time with a turn of the event loop between pages
 * (`pause`), for the background's large diffs: each page is a bounded piece of work.
 */
export async function readDiffPaced(
  store: Store,
  where: { collection: string; branch: string },
  from: number,
  to: number,
  most: number,
  pause: () => Promise<void>,
): Promise<Change[] | NoDiff> {
  const pages = diffPages(store, where, from, to, most);
  for (;;) {
    const step = pages.next();
    if (step.done) return step.value;
    await pause();
  }
}

function* diffPages(
  store: Store,
  where: { collection: string; branch: string },
  from: number,
  to: number,
  most: number,
): Generator<void, Change[] | NoDiff> {
  const changes: Change[] = [];
  let cursor: string | undefined;
  do {
    let page: ReturnType<Store["changes"]>;
    try {
      page = store.changes({
        ...where,
        fromBranch: undefined,
        from,
        to,
        limit: store.ctx.settings.changesMaxPage,
        cursor,
      });
    } catch (error) {
      const code = (error as SkeinError).code;
      if (code === "version_not_found" || code === "changes_node_budget") return "gone";
      throw error;
    }
    changes.push(...page.changes);
    if (changes.length > most) return "too_many";
    cursor = page.cursor ?? undefined;
    if (cursor !== undefined) yield;
  } while (cursor !== undefined);
  return changes;
}
