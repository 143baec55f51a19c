/**
 * The three-way merge of one tree's changes into another, from their common ancestor. Both
 * sides are diffed against the base (two TreeDiffs, so the nodes loaded grow with the
 * changes on each side times the depth, never with the tree size), and the two change
 * streams are joined in key order:
 *
 * - a key only "ours" changed stays as it is in ours (nothing to do);
 * - a key only "theirs" changed takes theirs (an edit to apply to ours);
 * - a key both changed to the same item (or both removed) stays;
 * - a key both changed differently, or one removed while the other changed, is a conflict
 *   `{key, base, ours, theirs}` (undefined: the key does not exist on that side).
 *
 * The result is the edits to apply to ours (sorted by key) and the conflicts; the caller
 * decides what a conflict becomes. Items are opaque here, as everywhere in the tree layer.
 */

import type { Edit } from "./chunker.ts";
import { TreeDiff } from "./diff.ts";
import { type Item, sameItem } from "./node.ts";
import type { NodeReader } from "./node-store.ts";

export interface TreeConflict {
  readonly key: string;
  readonly base: Item | undefined;
  readonly ours: Item | undefined;
  readonly theirs: Item | undefined;
}

export interface TreeMerge {
  /** Theirs' changes that do not conflict, to apply to ours, in key order. */
  readonly edits: Edit[];
  readonly conflicts: TreeConflict[];
  /** Nodes opened by both diffs. */
  readonly loaded: number;
}

export function mergeTrees(
  reader: NodeReader,
  roots: { base: string | null; ours: string | null; theirs: string | null },
  budget: number,
): TreeMerge {
  const edits: Edit[] = [];
  const conflicts: TreeConflict[] = [];
  if (roots.theirs === roots.base || roots.theirs === roots.ours) {
    return { edits, conflicts, loaded: 0 };
  }
  const ours = new TreeDiff(reader, roots.base, roots.ours, { budget });
  const theirs = new TreeDiff(reader, roots.base, roots.theirs, { budget });
  let x = ours.next();
  let y = theirs.next();
  while (y !== undefined) {
    if (x !== undefined && x.key < y.key) {
      x = ours.next();
      continue;
    }
    if (x === undefined || y.key < x.key) {
      edits.push([y.key, y.to]);
      y = theirs.next();
      continue;
    }
    if (!sameItem(x.to, y.to)) {
      conflicts.push({ key: y.key, base: y.from, ours: x.to, theirs: y.to });
    }
    x = ours.next();
    y = theirs.next();
  }
  return { edits, conflicts, loaded: ours.loaded + theirs.loaded };
}
