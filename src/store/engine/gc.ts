/**
 * Freeing tree nodes no retained version reaches: mark every node reachable from every
 * branch record (head and previous heads) and every history row, then delete the rest in
 * one transaction. Leaves are marked from their parents without being read; only internal
 * nodes are loaded, and a subtree already marked is not walked again. It runs on the
 * engine's single thread between requests, so no commit can interleave with the sweep.
 */

import type { StoreContext } from "./context.ts";
import { flushGroup } from "./group.ts";

export interface SweepResult {
  readonly nodes_freed: number;
  readonly node_bytes_before: number;
  readonly node_bytes_after: number;
}

export function sweepNodes(ctx: StoreContext): SweepResult {
  // Marking reads branch records and history rows from LMDB: deferred commits go first.
  flushGroup(ctx);
  const { db } = ctx;
  const marked = new Set<string>();
  const reader = ctx.readers[0]!;
  const mark = (hash: string | null) => {
    if (hash === null || marked.has(hash)) return;
    marked.add(hash);
    const node = reader.load(hash);
    if (node.level === 0) return;
    if (node.level === 1) for (const child of node.items) marked.add(child);
    else for (const child of node.items) mark(child);
  };
  for (const { value } of db.branches.getRange()) {
    for (const version of [value.head, ...value.kept]) for (const root of version.roots) mark(root);
  }
  for (const { value } of db.history.getRange()) for (const root of value.roots) mark(root);
  const before = db.nodeBytes().bytes;
  let freed = 0;
  db.commit(() => {
    for (const hash of db.nodes.getKeys()) {
      if (!marked.has(hash)) {
        db.nodes.removeSync(hash);
        freed++;
      }
    }
  });
  return { nodes_freed: freed, node_bytes_before: before, node_bytes_after: db.nodeBytes().bytes };
}
