/**
 * Frames on the store socket: a 4-byte big-endian payload length, then a MessagePack
 * payload. `FrameReader` reassembles frames from stream chunks and reports a frame larger
 * than the current limit as soon as its length is known, before buffering it.
 */

import { Packr } from "msgpackr";

const packr = new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true });

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

export type FrameEvent =
  | { readonly kind: "frame"; readonly payload: Buffer }
  | { readonly kind: "too_large"; readonly length: number };

export class FrameReader {
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** Largest payload accepted; changes after hello. */
  limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** True while part of a frame is buffered (a frame exchange is under way). */
  get partial(): boolean {
    return this.#buffered > 0;
  }

  /** Adds a chunk; returns the complete frames (and stops at an oversized one). */
  push(chunk: Buffer): FrameEvent[] {
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    const events: FrameEvent[] = [];
    let data = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks);
    let offset = 0;
    while (data.length - offset >= HEADER_BYTES) {
      const length = data.readUInt32BE(offset);
      if (length > this.limit) {
        events.push({ kind: "too_large", length });
        this.#chunks = [];
        this.#buffered = 0;
        return events;
      }
      if (data.length - offset - HEADER_BYTES < length) break;
      events.push({
        kind: "frame",
        payload: data.subarray(offset + HEADER_BYTES, offset + HEADER_BYTES + length),
      });
      offset += HEADER_BYTES + length;
    }
    data = data.subarray(offset);
    this.#chunks = data.length === 0 ? [] : [data];
    this.#buffered = data.length;
    return events;
  }
}
