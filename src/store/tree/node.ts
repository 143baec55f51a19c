/**
 * A prolly-tree node as the tree layer sees it: a level (0 for leaves), sorted keys and one
 * item per key. In a leaf the item is the record's value (opaque text); in an internal node
 * the key is the last key of a child subtree and the item is the child's address. A node is
 * immutable and addressed by the hash of its encoding, so equal subtrees are one node.
 */

export interface TreeNode {
  readonly level: number;
  readonly keys: readonly string[];
  readonly items: readonly string[];
  /** Content address (hex). */
  readonly hash: string;
  /** Encoded size in bytes: what the node costs on disk and in the cache. */
  readonly size: number;
}

export function lastKey(node: TreeNode): string {
  return node.keys[node.keys.length - 1]!;
}

/** Index of the first key >= `key` (keys.length when every key is smaller). */
export function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first key > `key`. */
export function upperBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
