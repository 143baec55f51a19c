/**
 * An LRU cache of decoded nodes bounded in bytes (the nodes' encoded sizes). A Map keeps
 * insertion order, so a hit is re-inserted at the young end and eviction takes from the old
 * end. The capacity can change at run time (the engine grows it as branches open).
 */

import type { TreeNode } from "./node.ts";

export class NodeCache {
  #capacity: number;
  #bytes = 0;
  readonly #nodes = new Map<string, TreeNode>();

  constructor(capacityBytes: number) {
    this.#capacity = capacityBytes;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get capacity(): number {
    return this.#capacity;
  }

  get(hash: string): TreeNode | undefined {
    const node = this.#nodes.get(hash);
    if (node !== undefined) {
      this.#nodes.delete(hash);
      this.#nodes.set(hash, node);
    }
    return node;
  }

  set(node: TreeNode): void {
    if (node.size > this.#capacity) return;
    const old = this.#nodes.get(node.hash);
    if (old !== undefined) {
      this.#nodes.delete(node.hash);
      this.#bytes -= old.size;
    }
    this.#nodes.set(node.hash, node);
    this.#bytes += node.size;
    this.#evict();
  }

  resize(capacityBytes: number): void {
    this.#capacity = capacityBytes;
    this.#evict();
  }

  #evict(): void {
    while (this.#bytes > this.#capacity) {
      const oldest = this.#nodes.keys().next();
      if (oldest.done) break;
      const node = this.#nodes.get(oldest.value)!;
      this.#nodes.delete(oldest.value);
      this.#bytes -= node.size;
    }
  }
}
