/**
 * The two reads every search path makes of a branch before it looks at any index: the
 * branch's head version (what "at the head" means for both the vector and the keyword
 * side), and admission, waiting until no pipelined commit is in flight. They sit apart so
 * the service, its vector side and its keyword side agree on both without importing each
 * other.
 */

import type { Store } from "../engine/index.ts";

/** The branch's newest version. */
export function headVersion(store: Store, collection: string, branch: string): number {
  return store.history(collection, branch, undefined, 1).rows[0]!.version;
}

/** Waits until no pipelined commit is in flight (reads need an idle pipeline). */
export async function admit(store: Store): Promise<void> {
  while (store.busy) await store.idle();
}
