/**
 * Frames on the embedding worker's pipes: a 4-byte big-endian payload length, then the
 * payload as UTF-8 JSON text (JSON, not the socket's MessagePack, so a worker in any
 * language can speak it with its standard library). The reader is the common one
 * (src/common/frame-reader.ts), dependency-free, so the worker may load it under Node's
 * permission model. Both the store and the shipped worker use this module.
 */

import { FRAME_HEADER_BYTES } from "../../common/frame-reader.ts";

export { FrameReader as JsonFrameReader } from "../../common/frame-reader.ts";

export function encodeJsonFrame(message: unknown): Buffer {
  const text = JSON.stringify(message);
  const length = Buffer.byteLength(text);
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  frame.writeUInt32BE(length, 0);
  frame.write(text, FRAME_HEADER_BYTES, "utf8");
  return frame;
}
