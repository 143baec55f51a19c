/**
 * Removing a collection or a branch together with its followers: the collections derived
 * from it (an embedded field's vectors live in a companion collection whose branches follow
 * the source's). A deletion takes its followers in the same step, so no sweep ever sees a
 * follower whose source is gone; the caller sweeps the freed nodes afterwards.
 */

import { deleteBranch } from "./branches.ts";
import { deleteCollection } from "./collections.ts";
import type { StoreContext } from "./context.ts";

/** Deletes `name` and each follower collection that exists. */
export function deleteCollectionWith(
  ctx: StoreContext,
  name: string,
  followers: readonly string[],
): void {
  deleteCollection(ctx, name);
  for (const follower of followers) {
    if (ctx.db.collections.get(follower) !== undefined) deleteCollection(ctx, follower);
  }
}

/** Deletes branch `name` of `collection` and the followers' branches of that name. */
export function deleteBranchWith(
  ctx: StoreContext,
  collection: string,
  name: string,
  followers: readonly string[],
): void {
  deleteBranch(ctx, collection, name);
  for (const follower of followers) {
    if (ctx.db.branches.get([follower, name]) !== undefined) deleteBranch(ctx, follower, name);
  }
}
