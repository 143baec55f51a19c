/**
 * Branches of a collection. Creating a branch copies one version record (shard roots and
 * receipt) from any ref (a branch head, a retained version, a tag): O(1) whatever the
 * branch size, since the trees are shared. The record also keeps that version as the
 * branch's fork point (`base`), the common ancestor of its first merge. Deleting drops the
 * record and its history rows.
 */

import type { VersionRecord } from "../codec/records.ts";
import { storeError } from "../errors.ts";
import { type Receipt, receiptOf } from "./commit.ts";
import { branchId, type StoreContext } from "./context.ts";
import { namedPage, type Page } from "./paging.ts";
import { type Ref, resolveRef } from "./refs.ts";
import { resolveVersion } from "./versions.ts";

export interface BranchInfo {
  readonly name: string;
  readonly head: Receipt;
  readonly created_at: string;
}

export function createBranch(
  ctx: StoreContext,
  collection: string,
  name: string,
  from: { branch: string; version: Ref | undefined },
): BranchInfo {
  const source: VersionRecord = resolveRef(ctx, collection, from.branch, from.version).version;
  const { db } = ctx;
  if (db.branches.get([collection, name]) !== undefined) {
    throw storeError("branch_exists", `branch ${JSON.stringify(name)} already exists`);
  }
  const createdAt = Date.now();
  db.commit(() => {
    db.branches.putSync([collection, name], {
      name,
      createdAt,
      head: source,
      kept: [],
      base: source,
    });
  });
  return { name, head: receiptOf(source), created_at: new Date(createdAt).toISOString() };
}

export function listBranches(
  ctx: StoreContext,
  collection: string,
  after: string | undefined,
  limit: number,
): Page<BranchInfo> {
  return namedPage(ctx, ctx.db.branches, { collection, after, limit }, (value) => ({
    name: value.name,
    head: receiptOf(value.head),
    created_at: new Date(value.createdAt).toISOString(),
  }));
}

export function deleteBranch(ctx: StoreContext, collection: string, name: string): void {
  const { db } = ctx;
  resolveVersion(ctx, collection, name, undefined);
  if (name === "main") throw storeError("branch_protected");
  db.commit(() => {
    db.branches.removeSync([collection, name]);
    ctx.branchRecords.delete(branchId(collection, name));
    for (const key of db.history.getKeys({
      start: [collection, name],
      end: [collection, name, Number.MAX_SAFE_INTEGER],
    })) {
      db.history.removeSync(key);
    }
  });
}
