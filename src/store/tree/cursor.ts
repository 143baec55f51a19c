/**
 * Reading a tree: point lookups and ordered scans. Internal keys are the last keys of their
 * subtrees, so a lookup descends into the first child whose last key is >= the key, and a
 * scan starting after `after` skips every child whose last key is <= `after` without
 * loading it.
 */

import { children, type Item, lowerBound, type TreeNode, upperBound } from "./node.ts";
import type { NodeReader } from "./node-store.ts";

export function getItem(reader: NodeReader, root: string | null, key: string): Item | undefined {
  if (root === null) return undefined;
  let node = reader.load(root);
  while (node.level > 0) {
    const i = lowerBound(node.keys, key);
    if (i === node.keys.length) return undefined;
    node = reader.load(children(node)[i]!);
  }
  const i = lowerBound(node.keys, key);
  return node.keys[i] === key ? node.items[i] : undefined;
}

/** Entries with keys > `after` (>= when `inclusive`; all when null), in key order. */
export function* scan(
  reader: NodeReader,
  root: string | null,
  after: string | null,
  inclusive = false,
): Generator<[key: string, item: Item]> {
  if (root === null) return;
  yield* scanNode(reader, reader.load(root), after, inclusive);
}

function* scanNode(
  reader: NodeReader,
  node: TreeNode,
  after: string | null,
  inclusive: boolean,
): Generator<[string, Item]> {
  // A child whose last key is below the bound holds nothing we want.
  const start =
    after === null ? 0 : inclusive ? lowerBound(node.keys, after) : upperBound(node.keys, after);
  if (node.level === 0) {
    for (let i = start; i < node.keys.length; i++) yield [node.keys[i]!, node.items[i]!];
    return;
  }
  // Only the first child visited can hold keys below the bound; later ones start above it.
  for (let i = start; i < node.keys.length; i++) {
    const bound = i === start ? after : null;
    yield* scanNode(reader, reader.load(children(node)[i]!), bound, inclusive);
  }
}

/** Counts entries and nodes reachable from `root` (tests and statistics). */
export function walk(
  reader: NodeReader,
  root: string | null,
  visit: (node: TreeNode) => void,
): void {
  if (root === null) return;
  const node = reader.load(root);
  visit(node);
  if (node.level > 0) for (const child of children(node)) walk(reader, child, visit);
}
