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

const packr = new Packr({ useRecords: false, variableMapSize: true });
const scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);

export const NODE_FORMAT = 1;

export const nodeCodec: NodeCodec = {
  // Each node is packed at the start of one reused scratch buffer and copied out into a
  // buffer of its own. Packed straight into fresh memory (msgpackr's 8 KiB buffers, grown
  // for almost every node, or a large arena) every page of it was touched for the first
  // time: a page fault per 4 KiB, measured at a third of the encoding's cost, and an arena
  // lived until a full GC, so each new one was fresh memory again. A node's own buffer is
  // small, dies young with its commit, and malloc hands its memory out again.
  encode(level, keys, items) {
    packr.useBuffer(scratch);
    const packed = packr.pack([level, keys, items]);
    const bytes = Buffer.allocUnsafeSlow(packed.length);
    packed.copy(bytes);
    return bytes;
  },
  // A bin decodes as a Buffer viewing `bytes` (msgpackr's default): the node's bytes are the
  // node store's own copy, never reused, so the view stays valid while the node lives.
  decode(hash, bytes) {
    const [level, keys, items] = packr.unpack(bytes) as [number, string[], Item[]];
    return { level, keys, items, hash, size: bytes.length };
  },
};
