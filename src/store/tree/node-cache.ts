/**
 * An LRU-approximating cache of decoded nodes bounded in bytes (the nodes' encoded sizes).
 * It is a CLOCK ("second chance") cache: a hit only sets a flag; eviction walks from the
 * oldest insertion, giving a flagged entry another round (moved to the young end, flag
 * cleared) and evicting the first unflagged one. Moving entries only at eviction keeps hits
 * to one Map lookup, which matters: a read touches one node per tree level. The capacity
 * can change at run time (the engine grows it as branches open).
 */

import type { TreeNode } from "./node.ts";

interface Entry {
  readonly node: TreeNode;
  used: boolean;
}

export class NodeCache {
  #capacity: number;
  #bytes = 0;
  /** Lookups answered and not answered from the cache (read by metrics). */
  hits = 0;
  misses = 0;
  readonly #entries = new Map<string, Entry>();

  constructor(capacityBytes: number) {
    this.#capacity = capacityBytes;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get capacity(): number {
    return this.#capacity;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(hash: string): TreeNode | undefined {
    const entry = this.#entries.get(hash);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    entry.used = true;
    return entry.node;
  }

  set(node: TreeNode): void {
    if (node.size > this.#capacity) return;
    const old = this.#entries.get(node.hash);
    if (old !== undefined) {
      old.used = true;
      return;
    }
    this.#entries.set(node.hash, { node, used: false });
    this.#bytes += node.size;
    this.#evict();
  }

  resize(capacityBytes: number): void {
    this.#capacity = capacityBytes;
    this.#evict();
  }

  #evict(): void {
    // Each entry gets at most one second chance per pass, so this ends.
    let chances = this.#entries.size;
    while (this.#bytes > this.#capacity) {
      const oldest = this.#entries.entries().next();
      if (oldest.done) break;
      const [hash, entry] = oldest.value;
      this.#entries.delete(hash);
      if (entry.used && chances-- > 0) {
        entry.used = false;
        this.#entries.set(hash, entry);
        continue;
      }
      this.#bytes -= entry.node.size;
    }
  }
}
