/**
 * The reads every search path makes of a branch before it looks at any index: the
 * branch's head version (what "at the head" means for both the vector and the keyword
 * side), the companion version holding its latest embedded vectors, and admission,
 * waiting until no pipelined commit is in flight. They sit apart so
 * the service, its vector side and its keyword side agree on both without importing each
 * other.
 */

import { companionMarker } from "../embed/companions.ts";
import { companionOf } from "../embed/fields.ts";
import type { Store } from "../engine/index.ts";

/** The branch's newest version. */
export function headVersion(store: Store, collection: string, branch: string): number {
  return store.history(collection, branch, undefined, 1).rows[0]!.version;
}

/** Waits until no pipelined commit is in flight (reads need an idle pipeline). */
export async function admit(store: Store): Promise<void> {
  while (store.busy) await store.idle();
}

/** The companion version complete at the branch's latest embedded data version. */
export function embeddedHead(
  store: Store,
  collection: string,
  branch: string,
): { companion: number; data: number; count: number } | undefined {
  const companion = companionOf(collection);
  const marker = companionMarker(store, companion, branch);
  if (
    marker === undefined ||
    marker.to !== undefined ||
    marker.branch !== branch ||
    marker.at === 0
  )
    return undefined;
  const row = store.history(companion, branch, undefined, 1).rows[0];
  return row === undefined
    ? undefined
    : { companion: row.version, data: marker.at, count: marker.count };
}
