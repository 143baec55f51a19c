/**
 * Frames on the embedding worker's pipes: a 4-byte big-endian payload length, then the
 * payload as UTF-8 JSON text. The reader reassembles frames from stream chunks and reports
 * a frame above its limit as soon as the length is known, before buffering the body. It
 * is small and dependency-free because the worker, under Node's permission model, may
 * read only its own files (the socket's reader in transport/frames.ts pulls in msgpackr).
 */

export const FRAME_HEADER_BYTES = 4;

export function encodeJsonFrame(message: unknown): Buffer {
  const text = JSON.stringify(message);
  const length = Buffer.byteLength(text);
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  frame.writeUInt32BE(length, 0);
  frame.write(text, FRAME_HEADER_BYTES, "utf8");
  return frame;
}

export type JsonFrameEvent =
  | { readonly kind: "frame"; readonly payload: Buffer }
  | { readonly kind: "too_large"; readonly length: number };

export class JsonFrameReader {
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** Largest payload accepted. */
  limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Adds a chunk and returns the frames now complete, stopping at an oversized one. */
  push(chunk: Buffer): JsonFrameEvent[] {
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    const events: JsonFrameEvent[] = [];
    while (this.#buffered >= FRAME_HEADER_BYTES) {
      const head = this.#peek(FRAME_HEADER_BYTES);
      const length = head.readUInt32BE(0);
      if (length > this.limit) {
        this.#chunks = [];
        this.#buffered = 0;
        events.push({ kind: "too_large", length });
        break;
      }
      if (this.#buffered < FRAME_HEADER_BYTES + length) break;
      const whole = this.#peek(FRAME_HEADER_BYTES + length);
      events.push({ kind: "frame", payload: whole.subarray(FRAME_HEADER_BYTES) });
      this.#drop(FRAME_HEADER_BYTES + length);
    }
    return events;
  }

  /** The first `n` buffered bytes, joining chunks only when the first is too short. */
  #peek(n: number): Buffer {
    if (this.#chunks[0]!.length < n) this.#chunks = [Buffer.concat(this.#chunks)];
    return this.#chunks[0]!.subarray(0, n);
  }

  #drop(n: number): void {
    const first = this.#chunks[0]!;
    if (first.length === n) this.#chunks.shift();
    else this.#chunks[0] = first.subarray(n);
    this.#buffered -= n;
  }
}
