/**
 * The on-disk format of a tree node: a MessagePack array `[level, keys, items]`. An item
 * is a MessagePack str (JSON text, a child address) or, for a leaf item written as raw
 * bytes, a MessagePack bin (store format 2, codec/records.ts); a node without bytes packs
 * exactly as in format 1, so no address changed with them. The address of a node is the
 * SHA-256 of exactly these bytes, so changing this encoding changes every address; the
 * golden tests in test/store/tree pin it (with and without a bin).
 */

import { Packr } from "msgpackr";
import type { Item } from "../tree/node.ts";
import type { NodeCodec } from "../tree/node-store.ts";

/** Room for a node of usual size many times over; a larger one makes msgpackr allocate. */
const SCRATCH_BYTES = 1 << 20;
/** Encoded nodes are placed in arenas of this size; a node over a quarter of it gets its own buffer. */
const ARENA_BYTES = 1 << 20;
const OWN_BUFFER_BYTES = ARENA_BYTES / 4;
/** Arenas whose nodes were all released, kept for reuse (more are left to the GC). */
const SPARE_ARENAS = 8;

const packr = new Packr({ useRecords: false, variableMapSize: true });
const scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);

/**
 * Memory for encoded nodes. A node is packed at the start of one reused scratch buffer
 * (msgpackr would otherwise start each in an 8 KiB buffer and, nodes being about that
 * size, grow and copy almost every time), then copied into the current arena. Memory the
 * process has not touched before costs a page fault per 4 KiB on first write (measured
 * at 13–18 µs each on the benchmark machine, a third of the encoding's time when every
 * arena was new), so arenas are reused: one goes back to the spares once it is full and
 * every node placed in it has been released (`release`: the commit pipeline releases a
 * commit's nodes once LMDB has written them, or given up on them). A node never released
 * (a dry-run merge's, a test's) keeps its arena out of reuse, and the GC frees it.
 */
class Arena {
  readonly bytes = Buffer.allocUnsafeSlow(ARENA_BYTES);
  used = 0;
  placed = 0;
  released = 0;
  full = false;
}

const arenaOf = new WeakMap<ArrayBufferLike, Arena>();
const spares: Arena[] = [];
let current = newArena();

function newArena(): Arena {
  const arena = spares.pop() ?? new Arena();
  arenaOf.set(arena.bytes.buffer, arena);
  return arena;
}

function place(packed: Buffer): Buffer {
  const length = packed.length;
  if (length > OWN_BUFFER_BYTES) {
    const own = Buffer.allocUnsafeSlow(length);
    packed.copy(own);
    return own;
  }
  if (current.used + length > ARENA_BYTES) {
    current.full = true;
    const full = current;
    current = newArena();
    reuseIfDone(full);
  }
  const at = current.used;
  packed.copy(current.bytes, at);
  current.used = at + length;
  current.placed++;
  return current.bytes.subarray(at, at + length);
}

function reuseIfDone(arena: Arena): void {
  if (!arena.full || arena.released !== arena.placed) return;
  arena.used = 0;
  arena.placed = 0;
  arena.released = 0;
  arena.full = false;
  if (spares.length < SPARE_ARENAS) spares.push(arena);
}

export const NODE_FORMAT = 1;

export const nodeCodec: NodeCodec & {
  /**
   * Takes back the bytes of a node `encode` returned, once nothing will read them again
   * (written by LMDB, or its commit given up). Each node is released at most once; its
   * memory may then hold another node.
   */
  release(bytes: Uint8Array): void;
} = {
  encode(level, keys, items) {
    packr.useBuffer(scratch);
    return place(packr.pack([level, keys, items]));
  },
  release(bytes) {
    const arena = arenaOf.get(bytes.buffer);
    if (arena === undefined) return;
    arena.released++;
    reuseIfDone(arena);
  },
  // A bin decodes as a Buffer viewing `bytes` (msgpackr's default): the node's bytes are the
  // node store's own copy, never reused, so the view stays valid while the node lives.
  decode(hash, bytes) {
    const [level, keys, items] = packr.unpack(bytes) as [number, string[], Item[]];
    return { level, keys, items, hash, size: bytes.length };
  },
};
