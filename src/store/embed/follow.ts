/**
 * Embedding storage follows its data: deleting a data branch deletes its vectors' branch,
 * and deleting a collection deletes its vectors and its binding, in the same request (and
 * the same sweep), whether or not embedding is configured now. So no vectors outlive their
 * records, and a collection created later under the same name starts unembedded.
 */

import type { SkeinError } from "../../common/errors.ts";
import type { SweepResult } from "../engine/gc.ts";
import type { Store } from "../engine/index.ts";
import { companionOf, REGISTRY } from "./fields.ts";

export function deleteBranchAndVectors(
  store: Store,
  collection: string,
  branch: string,
): Promise<SweepResult> {
  return store.deleteBranchInSteps(collection, branch, [companionOf(collection)]);
}

export function deleteCollectionAndVectors(store: Store, collection: string): Promise<SweepResult> {
  const swept = store.deleteCollectionInSteps(collection, [companionOf(collection)]);
  unbind(store, collection);
  return swept;
}

function unbind(store: Store, collection: string): void {
  const registry = { collection: REGISTRY, branch: "main" };
  try {
    if (!store.get(registry, collection).found) return;
  } catch (error) {
    if ((error as SkeinError).code === "collection_not_found") return;
    throw error;
  }
  store.delete(registry, [collection], "skein-embed");
}
