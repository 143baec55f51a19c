/**
 * A commit: edits grouped by shard are applied to the branch head's shard trees, and the
 * new nodes, the new branch record, any head that leaves the `kept_versions` window (as a
 * history row) and the version counter are written in one durable LMDB transaction. A
 * crash before the transaction commits leaves the old head; after it, the new one.
 *
 * Two ways to make it durable (`Durability`):
 * - `now`: written in a synchronous transaction before `commit` returns (in-process
 *   callers); the in-memory state advances only once it is written.
 * - `pipelined`: handed to the commit pipeline (pipeline.ts) and durable when `durable`
 *   resolves; the in-memory head advances at once, so the next commit builds on it while
 *   this one is flushed. The receipt must not be shown before `durable` resolves.
 */

import type { BranchRecord, VersionRecord } from "../codec/records.ts";
import { storeError } from "../errors.ts";
import type { BranchKey, CommitWrites } from "../lmdb/database.ts";
import { type Edit, TreeEditor } from "../tree/chunker.ts";
import type { TreeNode } from "../tree/node.ts";
import { branchId, type StoreContext } from "./context.ts";
import { loadBranch } from "./versions.ts";

export interface Receipt {
  readonly version: number;
  /** ISO 8601 time of the commit. */
  readonly time: string;
  readonly author: string;
  /** The commit message, when one was given. */
  readonly message?: string;
  /** A merge commit's two parents: the branch's previous head, then the merged version. */
  readonly parents?: readonly number[];
}

/** Who commits and why: an author, or an author and a message. */
export interface Signed {
  readonly author: string;
  readonly message?: string | undefined;
}

export function signed(by: string | Signed): Signed {
  return typeof by === "string" ? { author: by } : by;
}

export type Durability = "now" | "pipelined";

/** What a merge commit adds to an ordinary one. */
export interface CommitExtra {
  /** The merged version: the commit's second parent. */
  readonly merged?: number;
  /** Other branch records written in the same transaction (a merged branch's fork point). */
  readonly also?: readonly (readonly [BranchKey, BranchRecord])[];
  /**
   * The head the caller last saw: a commit onto any other head is refused `head_moved`, so
   * a reviewer's edit never lands on changes they have not seen (optimistic concurrency).
   */
  readonly expectHead?: number | undefined;
}

/** A committed value, and when it is durable (already, for `now`). */
export interface Committed<T> {
  readonly value: T;
  readonly durable: Promise<void>;
}

const DURABLE = Promise.resolve();

/** Refuses `head_moved` when a branch's head is not the version the caller expects. */
export function expectHead(branch: string, head: number, expected: number | undefined): void {
  if (expected === undefined || head === expected) return;
  throw storeError(
    "head_moved",
    `${branch} is at version ${head}, not the expected ${expected}; nothing was changed`,
  );
}

export function receiptOf(version: VersionRecord): Receipt {
  return {
    version: version.version,
    time: new Date(version.time).toISOString(),
    author: version.author,
    ...(version.message === undefined ? {} : { message: version.message }),
    ...(version.parents === undefined ? {} : { parents: version.parents }),
  };
}

/**
 * Groups edits by shard and sorts each group by key (the last edit of a key wins). A group
 * already in strictly ascending key order (a batch of keys written in order, the usual
 * load) is kept as it is: one pass of comparisons instead of a sort. Indexed loops: this
 * runs once per commit, often before the optimizing compiler has it, where a for-of or a
 * destructuring allocates an iterator result per record.
 */
export function byShard(ctx: StoreContext, edits: readonly Edit[]): Map<number, Edit[]> {
  const groups = new Map<number, Edit[]>();
  for (let i = 0; i < edits.length; i++) {
    const edit = edits[i]!;
    const shard = ctx.shardOf(edit[0]);
    const group = groups.get(shard);
    if (group === undefined) groups.set(shard, [edit]);
    else group.push(edit);
  }
  for (const group of groups.values()) {
    if (ascending(group)) continue;
    // A stable sort keeps a key's edits in call order; keep the last of each run.
    group.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    let out = 0;
    for (let i = 0; i < group.length; i++) {
      if (i + 1 < group.length && group[i + 1]![0] === group[i]![0]) continue;
      group[out++] = group[i]!;
    }
    group.length = out;
  }
  return groups;
}

/** True when every edit's key is above the one before it (sorted, no key twice). */
function ascending(group: readonly Edit[]): boolean {
  for (let i = 1; i < group.length; i++) if (!(group[i - 1]![0] < group[i]![0])) return false;
  return true;
}

export function commit(
  ctx: StoreContext,
  collection: string,
  branch: string,
  edits: Map<number, Edit[]>,
  by: string | Signed,
  durability: Durability,
  extra: CommitExtra = {},
): Committed<Receipt> {
  const { merged } = extra;
  // A synchronous commit must not build on, or be written before, commits in flight.
  if (durability === "now") ctx.pipeline.assertIdle();
  const { author, message } = signed(by);
  const record = loadBranch(ctx, collection, branch);
  expectHead(branch, record.head.version, extra.expectHead);
  const editors: TreeEditor[] = [];
  const roots = record.head.roots.map((root, shard) => {
    const group = edits.get(shard);
    if (group === undefined || group.length === 0) return root;
    const editor = new TreeEditor(ctx.readers[shard]!, shard);
    editors.push(editor);
    return editor.apply(root, group);
  });
  // A sweep in progress read its roots before this commit: keep what the commit writes.
  for (const sweep of ctx.sweeps) {
    for (const editor of editors) for (const hash of editor.written.keys()) sweep.protect(hash);
  }
  const parents = merged === undefined ? [record.head.version] : [record.head.version, merged];
  const head: VersionRecord = {
    version: ctx.nextVersion,
    time: Date.now(),
    author,
    roots,
    ...(message === undefined ? {} : { message }),
    ...(merged === undefined ? {} : { parents }),
  };
  const window = [record.head, ...record.kept];
  const leaving = window.splice(ctx.settings.keptVersions);
  const next: BranchRecord = { ...record, head, kept: window };
  const encoded: [string, Uint8Array][] = [];
  const nodes: [number, TreeNode][] = [];
  for (const editor of editors) {
    for (const entry of editor.encodedNodes()) encoded.push(entry);
    for (const node of editor.written.values()) nodes.push([editor.shard, node]);
  }
  const writes: CommitWrites = {
    nodes: encoded,
    branch: [[collection, branch], next],
    history: leaving.map((old) => [[collection, branch, old.version], old] as const),
    nextVersion: head.version + 1,
    graph: [[collection, head.version], parents],
    ...(extra.also === undefined ? {} : { also: extra.also }),
  };
  let durable = DURABLE;
  if (durability === "now") ctx.pipeline.writeNow(writes, nodes);
  else durable = ctx.pipeline.add(writes, nodes);
  ctx.branchRecords.set(branchId(collection, branch), next);
  for (const [[c, b], record] of extra.also ?? []) ctx.branchRecords.set(branchId(c, b), record);
  ctx.nextVersion = head.version + 1;
  ctx.advancesSinceRelease++;
  return { value: receiptOf(head), durable };
}
