/**
 * Hashes used by the tree: a node's address (SHA-256 of its encoded bytes, 20 bytes in hex)
 * and fast 32-bit hashes of strings for chunk boundaries and shard placement. The two
 * 32-bit hashes use different seeds so a shard's keys (which share `hash % shards`) are not
 * biased in where they cut chunks.
 */

import { hash } from "node:crypto";

/** The content address of an encoded node (one-shot hashing: no Hash object per node). */
export function nodeAddress(bytes: Uint8Array): string {
  return hash("sha256", bytes, "hex").slice(0, 40);
}

/** FNV-1a over UTF-16 code units followed by a murmur3 finalizer, seeded. */
export function stringHash32(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export const BOUNDARY_SEED = 0x5bd1e995;
export const SHARD_SEED = 0x1b873593;
