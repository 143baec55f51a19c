/**
 * Refs: every verb that takes a version takes a ref, so a caller can name a version the way
 * it thinks of it rather than by number. A ref is
 *
 * - a version number: retained on the request's branch (as before refs existed);
 * - a branch name: that branch's head;
 * - `branch@version`: a version retained on that branch;
 * - a tag name: the version the tag names (kept until the tag is deleted).
 *
 * A name that is both a branch and a tag means the branch (the loop `branch → write → diff
 * → merge` names branches far more often); `@` cannot occur in a name, so `branch@N` is
 * never ambiguous. A name that is neither is `ref_not_found`.
 */

import type { VersionRecord } from "../codec/records.ts";
import { storeError } from "../errors.ts";
import type { StoreContext } from "./context.ts";
import { resolveVersion } from "./versions.ts";

/** A version number or a ref string. */
export type Ref = number | string;

/** A resolved ref: the version and the branch (or tag's source branch) it was found on. */
export interface Resolved {
  readonly version: VersionRecord;
  readonly branch: string;
  /** The tag the ref named, when it named one. */
  readonly tag?: string;
}

/** The version `ref` names; a number or no ref reads `branch` (its head when undefined). */
export function resolveRef(
  ctx: StoreContext,
  collection: string,
  branch: string,
  ref: Ref | undefined,
): Resolved {
  if (ref === undefined || typeof ref === "number") {
    return { version: resolveVersion(ctx, collection, branch, ref), branch };
  }
  const at = ref.lastIndexOf("@");
  if (at >= 0) {
    const name = ref.slice(0, at);
    const digits = ref.slice(at + 1);
    if (!/^\d{1,16}$/.test(digits) || name === "") {
      throw storeError("ref_not_found", `${JSON.stringify(ref)} is not BRANCH@VERSION`);
    }
    return { version: resolveVersion(ctx, collection, name, Number(digits)), branch: name };
  }
  if (ctx.db.branches.get([collection, ref]) !== undefined) {
    return { version: resolveVersion(ctx, collection, ref, undefined), branch: ref };
  }
  const tag = ctx.db.tags.get([collection, ref]);
  if (tag !== undefined) return { version: tag.version, branch: tag.branch, tag: ref };
  if (ctx.db.collections.get(collection) === undefined) {
    throw storeError("collection_not_found", `no collection ${JSON.stringify(collection)}`);
  }
  throw storeError(
    "ref_not_found",
    `${JSON.stringify(ref)} names no branch or tag of collection ${JSON.stringify(collection)}`,
  );
}
