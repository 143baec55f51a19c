/**
 * Batching of stream writes: every stream message is a batch of frames, and `FrameBatcher`
 * collects the frames produced during one turn of the event loop and writes them as one
 * message, which is what keeps the stream cheap under load.
 */

/**
 * Collects frames and writes them as one batch at the end of the current event-loop turn.
 * Every producer (completions, task dispatch, acks) just calls `push`; the cost of a stream
 * write is paid once per turn instead of once per frame.
 */
export class FrameBatcher<F> {
  #frames: F[] = [];
  #scheduled = false;
  readonly #write: (frames: F[]) => void;
  readonly #max: number;

  constructor(write: (frames: F[]) => void, maxFrames = 512) {
    this.#write = write;
    this.#max = maxFrames;
  }

  push(frame: F): void {
    this.#frames.push(frame);
    if (this.#frames.length >= this.#max) {
      this.flush();
      return;
    }
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.#scheduled = false;
    if (this.#frames.length === 0) return;
    const frames = this.#frames;
    this.#frames = [];
    this.#write(frames);
  }

  /** Drops frames not yet written (the stream they were meant for is gone). */
  clear(): void {
    this.#frames = [];
  }
}
