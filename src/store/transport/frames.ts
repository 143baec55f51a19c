/**
 * Frames on the store socket: a 4-byte big-endian payload length, then a MessagePack
 * payload (integers as wire-integers.ts describes). The reader is the common one
 * (src/common/frame-reader.ts): it reassembles frames incrementally and reports a frame larger
 * than the current limit as soon as its length is known, before buffering it.
 */

import { Packr } from "msgpackr";
import { toWire } from "./wire-integers.ts";

const packr = new Packr({
  useRecords: false,
  mapsAsObjects: true,
  variableMapSize: true,
  // 64-bit integers up to 2^53 decode as numbers, larger ones as bigints (exact). msgpackr
  // reads "auto" (unpack.js) though its type declarations list only the other modes.
  int64AsType: "auto" as "bigint",
});

export { FrameReader } from "../../common/frame-reader.ts";

export const HEADER_BYTES = 4;

export function encodeFrame(message: unknown): Buffer {
  const payload = packr.pack(toWire(message));
  const frame = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  frame.writeUInt32BE(payload.length, 0);
  payload.copy(frame, HEADER_BYTES);
  return frame;
}

export function decodePayload(payload: Buffer): unknown {
  return packr.unpack(payload);
}
