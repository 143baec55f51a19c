/**
 * Applies sorted edits to a prolly tree and returns the new root, writing only the nodes on
 * changed paths. Each level is edited as a sequence: the nodes holding edited keys are
 * merged with their edits and re-chunked; because a boundary depends on one entry alone, a
 * run of nodes can stop as soon as its new last entry is a boundary, else it absorbs the
 * next node. The replaced and new nodes become edits of the level above (keyed by each
 * node's last key), up to the root; the result equals building the tree from scratch (the
 * tests check this). New nodes collect in `written` for the caller to persist.
 */

import { nodeAddress } from "./hash.ts";
import { children, type Item, lastKey, lowerBound, type TreeNode } from "./node.ts";
import type { NodeReader } from "./node-store.ts";
import { chunkEnds, isBoundary } from "./splitter.ts";

/** A sorted edit: a key and its new item, or undefined to delete the key. */
export type Edit = readonly [key: string, item: Item | undefined];

/**
 * Scratch for the entries of the run of nodes being re-chunked, shared by every editor and
 * reused from run to run, so it grows once, not per run or commit (only the first `count`
 * entries are the run's; nodes get slices). A run is re-chunked synchronously and never
 * within another, so one pair serves them all. A run longer than SCRATCH_KEPT entries (a
 * large batch) gives its memory back after it, so the scratch holds at most that many
 * references to old entries between runs.
 */
const scratchKeys: string[] = [];
const scratchItems: Item[] = [];
const SCRATCH_KEPT = 4096;

export class TreeEditor {
  readonly reader: NodeReader;
  /** The shard this tree belongs to (the caller's label; the tree layer ignores it). */
  readonly shard: number;
  /** Nodes created by this editor, by address, not yet persisted. */
  readonly written = new Map<string, TreeNode>();
  readonly #encoded = new Map<string, Uint8Array>();

  constructor(reader: NodeReader, shard = 0) {
    this.reader = reader;
    this.shard = shard;
  }

  /** Encoded bytes of every node written, for the caller's write transaction. */
  encodedNodes(): IterableIterator<[string, Uint8Array]> {
    return this.#encoded.entries();
  }

  /** Moves the written nodes into the reader's cache, once they are persisted. */
  publish(): void {
    for (const node of this.written.values()) this.reader.cache.set(node);
  }

  load(hash: string): TreeNode {
    return this.reader.load(hash, this.written);
  }

  /** Applies `edits` (sorted by key, keys unique) to the tree at `root` (null = empty). */
  apply(root: string | null, edits: readonly Edit[]): string | null {
    if (edits.length === 0) return root;
    if (root === null) {
      const keys: string[] = [];
      const items: Item[] = [];
      for (let i = 0; i < edits.length; i++) {
        const edit = edits[i]!;
        if (edit[1] === undefined) continue;
        keys.push(edit[0]);
        items.push(edit[1]);
      }
      return this.#buildUp(this.#split(0, keys, items));
    }
    let rootNode = this.load(root);
    let levelEdits: readonly Edit[] = edits;
    for (let level = 0; ; level++) {
      const replaced = this.#applyLevel(rootNode, level, levelEdits);
      if (level === rootNode.level) {
        const nodes = replaced
          .filter((e): e is readonly [string, string] => e[1] !== undefined)
          .map(([, hash]) => this.load(hash));
        const top = this.#buildUp(nodes);
        if (top === null) return null;
        // A root with one child is not canonical: the child is the root.
        rootNode = this.load(top);
        while (rootNode.level > 0 && rootNode.keys.length === 1) {
          rootNode = this.load(children(rootNode)[0]!);
        }
        return rootNode.hash;
      }
      levelEdits = replaced;
    }
  }

  /** Builds levels above `nodes` (one level's nodes, in order) until one node remains. */
  #buildUp(nodes: TreeNode[]): string | null {
    let current = nodes;
    while (current.length > 1) {
      const keys = current.map(lastKey);
      const items = current.map((n) => n.hash);
      current = this.#split(current[0]!.level + 1, keys, items);
    }
    return current[0]?.hash ?? null;
  }

  /** Chunks the first `count` entries (all by default) into new nodes of `level`. */
  #split(
    level: number,
    keys: readonly string[],
    items: readonly Item[],
    count = keys.length,
  ): TreeNode[] {
    const nodes: TreeNode[] = [];
    const ends = chunkEnds(level, keys, items, count);
    let start = 0;
    for (let e = 0; e < ends.length; e++) {
      const end = ends[e]!;
      nodes.push(this.#write(level, keys.slice(start, end), items.slice(start, end)));
      start = end;
    }
    return nodes;
  }

  #write(level: number, keys: string[], items: Item[]): TreeNode {
    const bytes = this.reader.codec.encode(level, keys, items);
    const hash = nodeAddress(bytes);
    const node: TreeNode = { level, keys, items, hash, size: bytes.length };
    this.written.set(hash, node);
    this.#encoded.set(hash, bytes);
    return node;
  }

  /** The node at `level` whose key range holds `key` (the last node for keys beyond all). */
  #find(root: TreeNode, level: number, key: string): TreeNode {
    let node = root;
    while (node.level > level) {
      const i = Math.min(lowerBound(node.keys, key), node.keys.length - 1);
      node = this.load(children(node)[i]!);
    }
    return node;
  }

  #next(root: TreeNode, node: TreeNode): TreeNode | undefined {
    const last = lastKey(node);
    // "\u0000" appended gives the smallest key above `last`.
    const candidate = this.#find(root, node.level, `${last}\u0000`);
    return lastKey(candidate) === last ? undefined : candidate;
  }

  /** Edits one level; returns the edits for the level above (old nodes out, new nodes in). */
  #applyLevel(root: TreeNode, level: number, edits: readonly Edit[]): Edit[] {
    const parent = new Map<string, string | undefined>();
    let i = 0;
    while (i < edits.length) {
      let node = this.#find(root, level, edits[i]![0]);
      // The run's entries go to the editor's scratch arrays (the nodes get slices of them).
      const keys = scratchKeys;
      const items = scratchItems;
      let count = 0;
      for (;;) {
        parent.set(lastKey(node), undefined);
        const next = this.#next(root, node);
        const bound = next === undefined ? undefined : lastKey(node);
        let j = i;
        while (j < edits.length && (bound === undefined || edits[j]![0] <= bound)) j++;
        count = mergeInto(keys, items, count, node, edits, i, j);
        i = j;
        if (next === undefined) break;
        if (count === 0 || isBoundary(level, keys[count - 1]!, items[count - 1]!)) break;
        node = next;
      }
      const fresh = this.#split(level, keys, items, count);
      if (count > SCRATCH_KEPT) {
        keys.length = 0;
        items.length = 0;
      }
      for (let f = 0; f < fresh.length; f++) parent.set(lastKey(fresh[f]!), fresh[f]!.hash);
    }
    return [...parent.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }
}

/**
 * Writes `node`'s entries merged with edits[from, to) to keys/items from index `count` on
 * (entries past it are stale, from an earlier run); returns the new count.
 */
function mergeInto(
  keys: string[],
  items: Item[],
  count: number,
  node: TreeNode,
  edits: readonly Edit[],
  from: number,
  to: number,
): number {
  let at = count;
  let a = 0;
  let e = from;
  const n = node.keys.length;
  while (a < n || e < to) {
    if (e >= to || (a < n && node.keys[a]! < edits[e]![0])) {
      keys[at] = node.keys[a]!;
      items[at++] = node.items[a]!;
      a++;
      continue;
    }
    // No destructuring: it allocates an iterator per edit where this is not optimized.
    const edit = edits[e]!;
    const key = edit[0];
    const item = edit[1];
    if (a < n && node.keys[a] === key) a++;
    if (item !== undefined) {
      keys[at] = key;
      items[at++] = item;
    }
    e++;
  }
  return at;
}
