/**
 * What one page of the embedding walk reads (walk.ts drives it): the data version a pass
 * brings the companion to, and one page of that pass, taken from the diff between the
 * version last embedded and the target (changes.list's diff, also across branches) or, when
 * the older side is no longer retained or the diff exceeds its node budget, from a listing
 * of the target merged with the companion's keys. Reads only; the walk commits the page.
 */

import type { SkeinError } from "../../common/errors.ts";
import type { Store } from "../engine/index.ts";
import { SCAN_PAGE } from "./companions.ts";
import { type Binding, companionOf, fieldText, type Marker, parseFieldPath } from "./fields.ts";

/** One page's work: texts to embed, keys whose vectors go, records that cannot be embedded. */
export interface Work {
  readonly puts: { key: string; value: unknown }[];
  readonly deletes: string[];
  /** Records whose text could not be embedded (too long, or over the window cap). */
  refused: number;
}

/** Fills `work` with one page of the pass and returns the marker after it. */
export function readPage(
  store: Store,
  limit: number,
  collection: string,
  binding: Binding,
  branch: string,
  marker: Marker,
  work: Work,
): Marker {
  const path = parseFieldPath(binding.field);
  const take = (key: string, value: unknown) => {
    const text = fieldText(value, path);
    if (text === undefined) work.deletes.push(key);
    else work.puts.push({ key, value: text });
  };
  if (marker.after === undefined && marker.at !== 0) {
    try {
      const page = store.changes({
        collection,
        branch,
        fromBranch: marker.branch,
        from: marker.at,
        to: marker.to,
        limit: Math.min(limit, store.ctx.settings.changesMaxPage),
        cursor: marker.cursor,
      });
      for (const row of page.changes) {
        if (row.type === "removed") work.deletes.push(row.key);
        // Another field changed: the text and its vectors are the same.
        else if (row.type === "modified" && fieldText(row.from, path) === fieldText(row.to, path))
          continue;
        else take(row.key, row.to);
      }
      return page.cursor === null ? done(marker, branch) : { ...marker, cursor: page.cursor };
    } catch (error) {
      const code = (error as SkeinError).code;
      if (code !== "version_not_found" && code !== "changes_node_budget") throw error;
      // The older side is gone (released) or too far: list the version and merge.
      marker = { ...marker, cursor: undefined, after: "" };
    }
  }
  return listPage(store, collection, branch, marker, limit, take, work);
}

function listPage(
  store: Store,
  collection: string,
  branch: string,
  marker: Marker,
  limit: number,
  take: (key: string, value: unknown) => void,
  work: Work,
): Marker {
  const after = marker.after === "" || marker.after === undefined ? undefined : marker.after;
  const page = store.list(
    { collection, branch, version: marker.to },
    { after, limit: Math.min(limit, store.ctx.settings.maxPage) },
  );
  const keys = new Set<string>();
  for (const row of page.rows) {
    keys.add(row.key);
    take(row.key, row.value);
  }
  const upper = page.next === null ? undefined : page.rows.at(-1)!.key;
  // Vectors of keys the version no longer has, in this page's key range, go.
  let from = after;
  for (;;) {
    const existing = store.list(
      { collection: companionOf(collection), branch },
      { after: from, limit: SCAN_PAGE },
    );
    for (const row of existing.rows) {
      if (upper !== undefined && row.key > upper) return listed(marker, branch, page.next, upper);
      if (!keys.has(row.key)) work.deletes.push(row.key);
    }
    if (existing.next === null) break;
    from = existing.rows.at(-1)!.key;
  }
  return listed(marker, branch, page.next, upper);
}

function listed(
  marker: Marker,
  branch: string,
  next: string | null,
  upper: string | undefined,
): Marker {
  return next === null ? done(marker, branch) : { ...marker, after: upper };
}

export function done(marker: Marker, branch: string): Marker {
  return { at: marker.to!, branch, count: marker.count };
}

/**
 * The data version the next pass brings the companion to: the oldest retained version of
 * the branch when the companion mirrors another branch (a branch's first version is
 * embedded too); the head when nothing is embedded yet; else the branch's next retained
 * version after the one mirrored (each version gets its own vectors). Undefined when up
 * to date.
 */
export function nextTarget(
  store: Store,
  collection: string,
  branch: string,
  marker: Marker,
): number | undefined {
  let before: number | undefined;
  let candidate: number | undefined;
  // Nothing embedded yet: the head, not every version before the field was bound.
  if (marker.at === 0 && marker.branch === branch) {
    return store.history(collection, branch, undefined, 1).rows[0]?.version;
  }
  for (;;) {
    const page = store.history(collection, branch, before, SCAN_PAGE);
    for (const row of page.rows) {
      if (marker.branch === branch && row.version <= marker.at) return candidate;
      candidate = row.version;
    }
    if (page.next === null) return candidate;
    before = page.next;
  }
}
