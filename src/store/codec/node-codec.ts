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

const ARENA_BYTES = 4 << 20;

const packr = new Packr({ useRecords: false, variableMapSize: true });
// Nodes are packed one after another into a large arena: by default msgpackr starts each
// node in an 8 KiB buffer and, a node being about that size, grows (allocates and copies)
// almost every time. An exhausted arena is replaced by a fresh one of the same size; the
// returned bytes are views of it, so earlier nodes are never overwritten.
packr.useBuffer(Buffer.allocUnsafeSlow(ARENA_BYTES));

export const NODE_FORMAT = 1;

export const nodeCodec: NodeCodec = {
  encode(level, keys, items) {
    return packr.pack([level, keys, items]);
  },
  // A bin decodes as a Buffer viewing `bytes` (msgpackr's default): the node's bytes are the
  // node store's own copy, never reused, so the view stays valid while the node lives.
  decode(hash, bytes) {
    const [level, keys, items] = packr.unpack(bytes) as [number, string[], Item[]];
    return { level, keys, items, hash, size: bytes.length };
  },
};
