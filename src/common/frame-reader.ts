/**
 * Length-prefixed frames from a byte stream: a 4-byte big-endian payload length, then the
 * payload. The store socket (MessagePack payloads) and the query worker pipes (JSON
 * payloads) both frame this way. `FrameReader` reassembles frames from stream chunks and
 * reports a frame above its limit as soon as its length is known, before buffering it.
 * Chunks are kept apart until a whole frame is in and joined once: joining on every
 * chunk copied a large frame once per read (a 256 KiB page in 64 KiB reads, four times).
 */

export const FRAME_HEADER_BYTES = 4;

export type FrameEvent =
  | { readonly kind: "frame"; readonly payload: Buffer }
  | { readonly kind: "too_large"; readonly length: number };

export class FrameReader {
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** Largest payload accepted; may change between pushes (the socket's after hello). */
  limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** True while part of a frame is buffered (a frame exchange is under way). */
  get partial(): boolean {
    return this.#buffered > 0;
  }

  /** Adds a chunk; returns the complete frames, in order (and stops at an oversized one). */
  push(chunk: Buffer): FrameEvent[] {
    if (chunk.length > 0) {
      this.#chunks.push(chunk);
      this.#buffered += chunk.length;
    }
    const events: FrameEvent[] = [];
    while (this.#buffered >= FRAME_HEADER_BYTES) {
      const length = this.#join(FRAME_HEADER_BYTES).readUInt32BE(0);
      if (length > this.limit) {
        events.push({ kind: "too_large", length });
        this.#chunks = [];
        this.#buffered = 0;
        return events;
      }
      const end = FRAME_HEADER_BYTES + length;
      if (this.#buffered < end) break;
      const data = this.#join(end);
      events.push({ kind: "frame", payload: data.subarray(FRAME_HEADER_BYTES, end) });
      if (data.length === end) this.#chunks.shift();
      else this.#chunks[0] = data.subarray(end);
      this.#buffered -= end;
    }
    return events;
  }

  /** Joins leading chunks until the first holds at least `bytes` bytes; returns it. */
  #join(bytes: number): Buffer {
    const chunks = this.#chunks;
    if (chunks[0]!.length >= bytes) return chunks[0]!;
    let count = 0;
    let joined = 0;
    while (joined < bytes) joined += chunks[count++]!.length;
    chunks.splice(0, count, Buffer.concat(chunks.slice(0, count), joined));
    return chunks[0]!;
  }
}
