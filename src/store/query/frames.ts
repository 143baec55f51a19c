/**
 * Frames between the store and a query worker: a 4-byte big-endian payload length, then
 * the payload as UTF-8 JSON text. JSON (not the socket's MessagePack) so a worker in any
 * language can speak it with its standard library. `JsonFrameReader` reassembles frames
 * from pipe chunks and reports a frame above its limit as soon as the length is known,
 * before buffering it. Both the store and the shipped worker use this module.
 */

export const FRAME_HEADER_BYTES = 4;

export function encodeJsonFrame(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  frame.writeUInt32BE(length, 0);
  frame.write(text, FRAME_HEADER_BYTES, "utf8");
  return frame;
}

export type JsonFrameEvent =
  | { readonly kind: "frame"; readonly text: string }
  | { readonly kind: "too_large"; readonly length: number };

export class JsonFrameReader {
  #buffer: Buffer = Buffer.alloc(0);
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** The complete frames in `chunk` and whatever was buffered before it, in order. */
  push(chunk: Buffer): JsonFrameEvent[] {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const events: JsonFrameEvent[] = [];
    let offset = 0;
    while (this.#buffer.length - offset >= FRAME_HEADER_BYTES) {
      const length = this.#buffer.readUInt32BE(offset);
      if (length > this.#limit) {
        events.push({ kind: "too_large", length });
        this.#buffer = Buffer.alloc(0);
        return events;
      }
      const end = offset + FRAME_HEADER_BYTES + length;
      if (this.#buffer.length < end) break;
      events.push({
        kind: "frame",
        text: this.#buffer.toString("utf8", offset + FRAME_HEADER_BYTES, end),
      });
      offset = end;
    }
    this.#buffer = offset === 0 ? this.#buffer : this.#buffer.subarray(offset);
    return events;
  }
}
