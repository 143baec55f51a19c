/**
 * A prolly-tree node as the tree layer sees it: a level (0 for leaves), sorted keys and one
 * item per key. In a leaf the item is the record's value, opaque to the tree: text, or raw
 * bytes; in an internal node the key is the last key of a child subtree and the item is
 * the child's address (text). A node is immutable and addressed by the hash of its
 * encoding, so equal subtrees are one node.
 */

/**
 * A leaf item: a record's value as stored. Text (JSON) for every record a client writes;
 * raw bytes only from the store's own writers (the embedding walk's vectors). The tree
 * never looks inside either; it compares them (`sameItem`) and counts their size.
 */
export type Item = string | Uint8Array;

export interface TreeNode {
  readonly level: number;
  readonly keys: readonly string[];
  /** Leaf values, or (level > 0) child addresses. */
  readonly items: readonly Item[];
  /** Content address (hex). */
  readonly hash: string;
  /** Encoded size in bytes: what the node costs on disk and in the cache. */
  readonly size: number;
}

export function lastKey(node: TreeNode): string {
  return node.keys[node.keys.length - 1]!;
}

/** The child addresses of an internal node (level > 0), whose items are always text. */
export function children(node: TreeNode): readonly string[] {
  return node.items as readonly string[];
}

/** True when two items (or absences) are the same value: equal text or equal bytes. */
export function sameItem(a: Item | undefined, b: Item | undefined): boolean {
  if (a === b) return true;
  if (typeof a === "string" || typeof b === "string" || a === undefined || b === undefined) {
    return false;
  }
  return a.byteLength === b.byteLength && Buffer.compare(a, b) === 0;
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
