/**
 * A commit: edits grouped by shard are applied to the branch head's shard trees, the new
 * nodes, the new branch record, any head that leaves the `kept_versions` window (as a
 * history row) and the version counter are written in one durable LMDB transaction, and
 * only then is the receipt returned. A crash before the transaction commits leaves the old
 * head; after it, the new one: an acknowledged commit is never lost. Inside a commit group
 * (group.ts) the write is deferred to the group's one transaction, and the caller holds
 * the receipt until that transaction commits.
 */

import type { BranchRecord, VersionRecord } from "../codec/records.ts";
import { VERSION_KEY } from "../codec/records.ts";
import { type Edit, TreeEditor } from "../tree/chunker.ts";
import { branchId, type StoreContext } from "./context.ts";
import { loadBranch } from "./versions.ts";

export interface Receipt {
  readonly version: number;
  /** ISO 8601 time of the commit. */
  readonly time: string;
  readonly author: string;
}

export function receiptOf(version: VersionRecord): Receipt {
  return {
    version: version.version,
    time: new Date(version.time).toISOString(),
    author: version.author,
  };
}

/** Groups edits by shard and sorts each group by key (the last edit of a key wins). */
export function byShard(ctx: StoreContext, edits: Iterable<Edit>): Map<number, Edit[]> {
  const groups = new Map<number, Edit[]>();
  for (const edit of edits) {
    const shard = ctx.shardOf(edit[0]);
    const group = groups.get(shard);
    if (group === undefined) groups.set(shard, [edit]);
    else group.push(edit);
  }
  for (const [shard, group] of groups) {
    // A stable sort keeps a key's edits in call order; keep the last of each run.
    group.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    let out = 0;
    for (let i = 0; i < group.length; i++) {
      if (i + 1 < group.length && group[i + 1]![0] === group[i]![0]) continue;
      group[out++] = group[i]!;
    }
    group.length = out;
    groups.set(shard, group);
  }
  return groups;
}

export function commit(
  ctx: StoreContext,
  collection: string,
  branch: string,
  edits: Map<number, Edit[]>,
  author: string,
): Receipt {
  const record = loadBranch(ctx, collection, branch);
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
  const head: VersionRecord = { version: ctx.nextVersion, time: Date.now(), author, roots };
  const window = [record.head, ...record.kept];
  const leaving = window.splice(ctx.settings.keptVersions);
  const next: BranchRecord = { ...record, head, kept: window };
  const { db } = ctx;
  const write = () => {
    for (const editor of editors) {
      for (const [hash, bytes] of editor.encodedNodes()) db.putNode(hash, bytes);
    }
    db.branches.putSync([collection, branch], next);
    for (const old of leaving) db.history.putSync([collection, branch, old.version], old);
    db.counters.putSync(VERSION_KEY, head.version + 1);
  };
  const group = ctx.group;
  if (group === null) {
    db.commit(write);
    // New nodes are the likeliest to be read next; keep them decoded.
    for (const editor of editors) editor.publish();
  } else {
    group.actions.push(write);
    for (const editor of editors) {
      for (const node of editor.written.values()) {
        group.nodes.set(node.hash, node);
        group.byShard.push([editor.shard, node]);
      }
    }
  }
  ctx.branchRecords.set(branchId(collection, branch), next);
  ctx.nextVersion = head.version + 1;
  ctx.advancesSinceRelease++;
  return receiptOf(head);
}
