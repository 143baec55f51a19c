/**
 * Frames on the store socket: a 4-byte big-endian payload length, then a MessagePack
 * payload. The reader is the common one (src/common/frame-reader.ts), which reports a
 * frame larger than the current limit as soon as its length is known.
 */

import { Packr } from "msgpackr";

const packr = new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true });

export { FrameReader } from "../../common/frame-reader.ts";

export const HEADER_BYTES = 4;

export function encodeFrame(message: unknown): Buffer {
  const payload = packr.pack(message);
  const frame = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  frame.writeUInt32BE(payload.length, 0);
  payload.copy(frame, HEADER_BYTES);
  return frame;
}

export function decodePayload(payload: Buffer): unknown {
  return packr.unpack(payload);
}
