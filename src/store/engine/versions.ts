/**
 * Finding branches and versions. A branch's retained versions are its head, the previous
 * heads in its record (newest first), its fork point and its history rows; `resolveVersion` finds any of
 * them, so every retained version can be read.
 */

import type { BranchRecord, VersionRecord } from "../codec/records.ts";
import { storeError } from "../errors.ts";
import { branchId, type StoreContext } from "./context.ts";

export function loadBranch(ctx: StoreContext, collection: string, branch: string): BranchRecord {
  const id = branchId(collection, branch);
  const cached = ctx.branchRecords.get(id);
  if (cached !== undefined) return cached;
  const record = ctx.db.branches.get([collection, branch]);
  if (record === undefined) {
    if (ctx.db.collections.get(collection) === undefined) {
      throw storeError("collection_not_found", `no collection ${JSON.stringify(collection)}`);
    }
    throw storeError(
      "branch_not_found",
      `no branch ${JSON.stringify(branch)} in collection ${JSON.stringify(collection)}`,
    );
  }
  ctx.touchBranch(collection, branch);
  ctx.branchRecords.set(id, record);
  return record;
}

/** The version `version` of a branch (its head when undefined). */
export function resolveVersion(
  ctx: StoreContext,
  collection: string,
  branch: string,
  version: number | undefined,
): VersionRecord {
  const record = loadBranch(ctx, collection, branch);
  if (version === undefined) return record.head;
  const found = retainedIn(ctx, collection, branch, record, version);
  if (found !== undefined) return found;
  throw storeError(
    "version_not_found",
    `version ${version} is not retained on branch ${JSON.stringify(branch)}`,
  );
}

/** `version` among the versions a branch retains (its record `record`); undefined if none. */
export function retainedIn(
  ctx: StoreContext,
  collection: string,
  branch: string,
  record: BranchRecord,
  version: number,
): VersionRecord | undefined {
  if (version === record.head.version) return record.head;
  const kept = record.kept.find((v) => v.version === version);
  if (kept !== undefined) return kept;
  // The fork point the record keeps (merges' common ancestor) is retained too.
  if (record.base?.version === version) return record.base;
  return ctx.db.history.get([collection, branch, version]);
}
