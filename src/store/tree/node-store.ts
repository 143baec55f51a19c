/**
 * The tree layer's view of storage. A `NodeStore` fetches and saves encoded nodes by address
 * (the LMDB implementation lives in src/store/lmdb/); a `NodeReader` turns addresses into
 * decoded nodes through a byte-bounded cache and a set of pending nodes written by the
 * commit being built, and counts the nodes it loads so a diff can be held to a budget.
 */

import type { Item, TreeNode } from "./node.ts";
import type { NodeCache } from "./node-cache.ts";

export interface NodeStore {
  /** Encoded node bytes, or undefined when the address is unknown. */
  get(hash: string): Uint8Array | undefined;
}

export interface NodeCodec {
  encode(level: number, keys: readonly string[], items: readonly Item[]): Uint8Array;
  decode(hash: string, bytes: Uint8Array): TreeNode;
}

/** Thrown when a node is missing from the store: the store is damaged or a root is stale. */
export class MissingNodeError extends Error {
  constructor(hash: string) {
    super(`tree node ${hash} is missing from the store`);
    this.name = "MissingNodeError";
  }
}

export class NodeReader {
  readonly store: NodeStore;
  readonly codec: NodeCodec;
  readonly cache: NodeCache;
  /** Nodes written but not yet durable (the commit pipeline's), readable before the cache. */
  pending: ReadonlyMap<string, TreeNode> | undefined;

  constructor(store: NodeStore, codec: NodeCodec, cache: NodeCache) {
    this.store = store;
    this.codec = codec;
    this.cache = cache;
  }

  load(hash: string, pending?: ReadonlyMap<string, TreeNode>): TreeNode {
    const fresh = pending?.get(hash) ?? this.pending?.get(hash);
    if (fresh !== undefined) return fresh;
    const cached = this.cache.get(hash);
    if (cached !== undefined) return cached;
    const bytes = this.store.get(hash);
    if (bytes === undefined) throw new MissingNodeError(hash);
    const node = this.codec.decode(hash, bytes);
    this.cache.set(node);
    return node;
  }
}
