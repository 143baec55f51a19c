/**
 * Where chunks end. A chunk (node) ends after an entry whose own hash falls under a
 * threshold proportional to the entry's size, so nodes average TARGET_NODE_BYTES and a
 * boundary depends on that one entry alone, never on where the chunk began. That makes
 * the tree a pure function of its contents (history independent) and makes an edit
 * re-chunk only its own neighbourhood. Leaves hash the key (so rewriting a value of the
 * same size never moves a boundary); internal levels use the child's address, which is
 * already uniformly random. The last node of a level ends wherever the entries end.
 */

import { BOUNDARY_SEED, stringHash32 } from "./hash.ts";
import type { Item } from "./node.ts";

export const TARGET_NODE_BYTES = 8192;
/** Per-entry overhead in the encoding, counted so tiny entries still cut chunks. */
const ENTRY_OVERHEAD = 4;
const SPACE = 2 ** 32;

/**
 * An entry's share of a node: text counts its UTF-16 code units (as it always has: the
 * format's boundaries are frozen), raw bytes their byte length.
 */
export function entryBytes(key: string, item: Item): number {
  return key.length + item.length + ENTRY_OVERHEAD;
}

export function isBoundary(level: number, key: string, item: Item): boolean {
  const hash =
    level === 0
      ? stringHash32(key, BOUNDARY_SEED)
      : Number.parseInt((item as string).slice(0, 8), 16);
  const share = entryBytes(key, item) / TARGET_NODE_BYTES;
  return share >= 1 || hash < share * SPACE;
}

/**
 * Cuts sorted entries (the first `count`, all by default) into chunks: the index one past
 * each chunk's end.
 */
export function chunkEnds(
  level: number,
  keys: readonly string[],
  items: readonly Item[],
  count = keys.length,
): number[] {
  const ends: number[] = [];
  for (let i = 0; i < count; i++) {
    if (isBoundary(level, keys[i]!, items[i]!)) ends.push(i + 1);
  }
  if (count > 0 && ends[ends.length - 1] !== count) ends.push(count);
  return ends;
}
