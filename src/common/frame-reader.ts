/**
 * Length-prefixed frames from a byte stream: a 4-byte big-endian payload length, then the
 * payload. The store socket (MessagePack payloads) and the query worker pipes (JSON
 * payloads) both frame this way, with this one reader.
 */

export const FRAME_HEADER_BYTES = 4;

export type FrameEvent =
  | { readonly kind: "frame"; readonly payload: Buffer }
  | { readonly kind: "too_large"; readonly length: number };

/**
 * Reassembles frames incrementally. Chunks are kept as a list with the count of bytes
 * buffered, and each byte is copied at most once: a frame found whole in one chunk is a
 * view of it; a frame whose body is still arriving gets its payload buffer once its 4-byte
 * header is read and checked against `limit` (before any of its body is kept), and every
 * chunk of the body is copied into it as it arrives. So a large frame trickled in small
 * chunks costs O(frame size) in total, spread over its chunks, instead of a re-join of
 * everything buffered per chunk (or one large copy, and its pause, at the end). Frames are
 * parsed as the iterable `push` returns is consumed, so a `limit` changed between two
 * events (the server does so on hello) holds for every frame after it, even one that
 * arrived in the same chunk.
 */
export class FrameReader {
  readonly #chunks: Buffer[] = [];
  /** Bytes in `#chunks`. */
  #buffered = 0;
  /** The current frame's payload length once its header is read; undefined before. */
  #length: number | undefined;
  /** The payload of a frame whose body is arriving over several chunks, and bytes in it. */
  #payload: Buffer | undefined;
  #filled = 0;
  #copied = 0;
  /** Largest payload accepted; changes after hello. */
  limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** True while part of a frame is buffered (a frame exchange is under way). */
  get partial(): boolean {
    return this.#buffered > 0 || this.#length !== undefined;
  }

  /** Bytes copied to join chunks so far (a statistic: the tests pin it to O(input)). */
  get copiedBytes(): number {
    return this.#copied;
  }

  /**
   * Adds a chunk; the result yields the frames now complete, in order, and stops at an
   * oversized one (after which the reader holds nothing).
   */
  push(chunk: Buffer): Iterable<FrameEvent> {
    if (chunk.length > 0) {
      this.#chunks.push(chunk);
      this.#buffered += chunk.length;
    }
    return this.#events();
  }

  *#events(): Generator<FrameEvent> {
    for (;;) {
      const event = this.#next();
      if (event === undefined) return;
      yield event;
      if (event.kind === "too_large") return;
    }
  }

  #next(): FrameEvent | undefined {
    if (this.#length === undefined) {
      if (this.#buffered < FRAME_HEADER_BYTES) return undefined;
      const length = this.#take(FRAME_HEADER_BYTES).readUInt32BE(0);
      if (length > this.limit) {
        this.#chunks.length = 0;
        this.#buffered = 0;
        return { kind: "too_large", length };
      }
      if (this.#buffered >= length) return { kind: "frame", payload: this.#take(length) };
      this.#length = length;
      this.#payload = Buffer.allocUnsafe(length);
      this.#filled = 0;
    }
    const payload = this.#payload!;
    const n = Math.min(this.#length - this.#filled, this.#buffered);
    this.#copyInto(payload, this.#filled, n);
    this.#filled += n;
    if (this.#filled < this.#length) return undefined;
    this.#length = undefined;
    this.#payload = undefined;
    return { kind: "frame", payload };
  }

  /** The first `n` buffered bytes (n ≤ buffered): a view of one chunk, or one copy. */
  #take(n: number): Buffer {
    const first = this.#chunks[0];
    if (first !== undefined && first.length >= n) {
      this.#buffered -= n;
      if (first.length === n) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    this.#copyInto(out, 0, n);
    return out;
  }

  /** Moves the first `n` buffered bytes (n ≤ buffered) into `target` at `offset`. */
  #copyInto(target: Buffer, offset: number, n: number): void {
    this.#buffered -= n;
    this.#copied += n;
    for (let filled = 0; filled < n; ) {
      const chunk = this.#chunks[0]!;
      const used = Math.min(chunk.length, n - filled);
      chunk.copy(target, offset + filled, 0, used);
      filled += used;
      if (used === chunk.length) this.#chunks.shift();
      else this.#chunks[0] = chunk.subarray(used);
    }
  }
}
