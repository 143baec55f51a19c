/**
 * branches.merge and branches.revert.
 *
 * Merge brings the version `from` names (a ref: usually another branch's head) into the
 * branch `into`. With A the newest common ancestor of into's head and `from` (ancestor.ts):
 *
 * - A is `from` itself: into already holds it (`up_to_date`, nothing written);
 * - A is into's head: into moves to `from`'s version (`fast_forward`; no new version, the
 *   old head joins the kept versions like any previous head);
 * - otherwise a three-way merge from A (three-way.ts) and a merge commit whose parents are
 *   into's previous head and `from`'s version. The merged branch's fork point moves to the
 *   merged version, so the next merge between the two finds its ancestor retained.
 *
 * Revert commits the inverse of one version's changes: the three-way merge whose base is
 * that version, "ours" the branch head and "theirs" the version's first parent, so a key
 * changed since is a conflict, as in a merge. Both take a strategy and a dry run: a dry
 * run computes the result and the conflicts and writes nothing.
 */

import type { BranchRecord, VersionRecord } from "../codec/records.ts";
import { storeError } from "../errors.ts";
import type { BranchKey } from "../lmdb/database.ts";
import { ancestorRecord, commonAncestor, parentsOf } from "./ancestor.ts";
import { commit, expectHead, type Receipt, receiptOf, type Signed, signed } from "./commit.ts";
import { branchId, type StoreContext } from "./context.ts";
import { type Ref, resolveRef } from "./refs.ts";
import {
  type Conflict,
  conflictRefusal,
  type Strategy,
  type ThreeWay,
  threeWay,
} from "./three-way.ts";
import { loadBranch } from "./versions.ts";

export interface MergeOptions {
  readonly strategy: Strategy;
  readonly dryRun: boolean;
  readonly by: Signed;
  /** The head of the merged-into (or reverted) branch the caller previewed (`head_moved`). */
  readonly expectHead?: number | undefined;
  /** The version `from` named when the caller previewed the merge (`head_moved`). */
  readonly expectFrom?: number | undefined;
}

export interface MergeResult {
  readonly outcome: "merged" | "fast_forward" | "up_to_date" | "reverted";
  /** False for a dry run and for `up_to_date`. */
  readonly committed: boolean;
  /** The branch's new head (null when nothing was committed). */
  readonly receipt: Receipt | null;
  /** The common ancestor (merge) or the reverted version (revert). */
  readonly base: number | null;
  readonly ours: number;
  readonly theirs: number;
  /** Keys written from theirs' side (clean changes, plus conflicts taken with `theirs`). */
  readonly applied: number;
  /** At most changes_max_page conflicts; `conflict_count` is exact. */
  readonly conflicts: Conflict[];
  readonly conflict_count: number;
  readonly nodes_loaded: number;
}

export function mergeBranch(
  ctx: StoreContext,
  collection: string,
  from: Ref,
  into: string,
  options: MergeOptions,
): MergeResult {
  const ours = loadBranch(ctx, collection, into).head;
  const source = resolveRef(ctx, collection, into, from);
  const theirs = source.version;
  // A merge previewed on other heads would not be the merge the caller saw: refused whole.
  expectHead(into, ours.version, options.expectHead);
  expectHead(String(from), theirs.version, options.expectFrom);
  const baseVersion = commonAncestor(ctx, collection, ours.version, theirs.version);
  const plain = { ours: ours.version, theirs: theirs.version, base: baseVersion };
  const nothing = { applied: 0, conflicts: [], conflict_count: 0, nodes_loaded: 0 };
  if (baseVersion === theirs.version) {
    return { outcome: "up_to_date", committed: false, receipt: null, ...plain, ...nothing };
  }
  if (baseVersion === ours.version) {
    if (!options.dryRun) fastForward(ctx, collection, into, theirs);
    return {
      outcome: "fast_forward",
      committed: !options.dryRun,
      receipt: options.dryRun ? null : receiptOf(theirs),
      ...plain,
      ...nothing,
    };
  }
  const base = ancestorRecord(ctx, collection, baseVersion, [into, source.branch]);
  const merge = threeWay(ctx, { base, ours, theirs }, options.strategy);
  if (merge.conflictCount > 0 && options.strategy === "fail" && !options.dryRun) {
    throw conflictRefusal(merge, `merging ${String(from)} into ${into}`);
  }
  let receipt: Receipt | null = null;
  if (!options.dryRun) {
    const message = options.by.message ?? `merge ${String(from)} into ${into}`;
    receipt = commit(ctx, collection, into, merge.edits, { ...options.by, message }, "now", {
      merged: theirs.version,
      also: forkPointMove(ctx, collection, source, into),
    }).value;
  }
  return merged("merged", receipt, plain, merge);
}

export function revertVersion(
  ctx: StoreContext,
  collection: string,
  branch: string,
  version: Ref,
  options: MergeOptions,
): MergeResult {
  const ours = loadBranch(ctx, collection, branch).head;
  expectHead(branch, ours.version, options.expectHead);
  const target = resolveRef(ctx, collection, branch, version).version;
  const parents = parentsOf(ctx, collection, target.version);
  if (parents === undefined) {
    throw storeError(
      "merge_base_released",
      `version ${target.version} predates the version graph: its parent is unknown`,
    );
  }
  const parent = parents[0];
  const before: VersionRecord =
    parent === undefined
      ? { ...target, roots: target.roots.map(() => null) }
      : ancestorRecord(ctx, collection, parent, [branch]);
  const merge = threeWay(ctx, { base: target, ours, theirs: before }, options.strategy);
  const plain = { base: target.version, ours: ours.version, theirs: before.version };
  if (merge.applied === 0 && merge.conflictCount === 0) {
    return { ...merged("up_to_date", null, plain, merge), committed: false };
  }
  if (merge.conflictCount > 0 && options.strategy === "fail" && !options.dryRun) {
    throw conflictRefusal(merge, `reverting version ${target.version} on ${branch}`);
  }
  let receipt: Receipt | null = null;
  if (!options.dryRun) {
    const message = options.by.message ?? `revert version ${target.version}`;
    receipt = commit(ctx, collection, branch, merge.edits, { ...options.by, message }, "now").value;
  }
  return merged("reverted", receipt, plain, merge);
}

/** The result of a three-way merge; committed when it has a receipt. */
function merged(
  outcome: MergeResult["outcome"],
  receipt: Receipt | null,
  plain: { base: number | null; ours: number; theirs: number },
  merge: ThreeWay,
): MergeResult {
  return {
    outcome,
    committed: receipt !== null,
    receipt,
    ...plain,
    applied: merge.applied,
    conflicts: merge.conflicts,
    conflict_count: merge.conflictCount,
    nodes_loaded: merge.loaded,
  };
}

/** Moves `into` to `version` (a descendant of its head): the old head becomes a kept one. */
function fastForward(
  ctx: StoreContext,
  collection: string,
  into: string,
  version: VersionRecord,
): void {
  ctx.pipeline.assertIdle();
  const record = loadBranch(ctx, collection, into);
  const window = [record.head, ...record.kept];
  const leaving = window.splice(ctx.settings.keptVersions);
  const next: BranchRecord = { ...record, head: version, kept: window };
  const { db } = ctx;
  db.commit(() => {
    db.branches.putSync([collection, into], next);
    for (const old of leaving) db.history.putSync([collection, into, old.version], old);
  });
  ctx.branchRecords.set(branchId(collection, into), next);
  ctx.advancesSinceRelease++;
}

/** The merged branch's record with its fork point at the merged version (a branch ref only). */
function forkPointMove(
  ctx: StoreContext,
  collection: string,
  source: ReturnType<typeof resolveRef>,
  into: string,
): (readonly [BranchKey, BranchRecord])[] {
  if (source.tag !== undefined || source.branch === into) return [];
  const record = loadBranch(ctx, collection, source.branch);
  return [[[collection, source.branch], { ...record, base: source.version }]];
}

/** A merge's or revert's options as the store's callers give them, with their defaults. */
export function mergeOptionsOf(
  options: Partial<Omit<MergeOptions, "by">> & { by?: string | Signed },
): MergeOptions {
  return {
    strategy: options.strategy ?? "fail",
    dryRun: options.dryRun ?? false,
    by: signed(options.by ?? "local"),
    expectHead: options.expectHead,
    expectFrom: options.expectFrom,
  };
}
