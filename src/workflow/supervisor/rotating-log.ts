/**
 * A supervised worker's log, size-bounded: the worker's stdout and stderr come through this
 * server (pipes, not an inherited file), and are appended to `<name>.log` until the next
 * chunk would pass `maxBytes`; then the file is rotated (`<name>.log` → `.1` → `.2` …, the
 * oldest beyond `keep` removed) and a fresh one started. A chatty worker can therefore hold
 * at most maxBytes × (keep + 1) of disk. Writes are synchronous appends to a local file (page
 * cache), so lines keep their order and a crash loses nothing already written. One log per
 * path is shared by the processes writing it (a restarted worker's old and new process).
 */

import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";

export interface LogLimits {
  /** The largest a log file grows before it is rotated. */
  readonly maxBytes: number;
  /** Rotated files kept (`.1` … `.keep`). */
  readonly keep: number;
}

export const DEFAULT_LOG_LIMITS: LogLimits = { maxBytes: 10 * 1024 * 1024, keep: 3 };

export class RotatingLog {
  readonly #path: string;
  readonly #limits: LogLimits;
  #fd: number;
  #size: number;

  constructor(path: string, limits: LogLimits) {
    this.#path = path;
    this.#limits = limits;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.#fd = openSync(path, "a", 0o600);
    this.#size = fstatSync(this.#fd).size;
  }

  write(chunk: Buffer): void {
    if (this.#size > 0 && this.#size + chunk.length > this.#limits.maxBytes) this.#rotate();
    // A single chunk larger than the bound is cut to it: the file never passes maxBytes.
    const part =
      chunk.length > this.#limits.maxBytes
        ? chunk.subarray(chunk.length - this.#limits.maxBytes)
        : chunk;
    writeSync(this.#fd, part);
    this.#size += part.length;
  }

  close(): void {
    closeSync(this.#fd);
  }

  #rotate(): void {
    closeSync(this.#fd);
    const { keep } = this.#limits;
    rmSync(`${this.#path}.${keep}`, { force: true });
    for (let i = keep - 1; i >= 1; i--) {
      if (existsSync(`${this.#path}.${i}`))
        renameSync(`${this.#path}.${i}`, `${this.#path}.${i + 1}`);
    }
    if (keep >= 1) renameSync(this.#path, `${this.#path}.1`);
    else rmSync(this.#path, { force: true });
    this.#fd = openSync(this.#path, "a", 0o600);
    this.#size = 0;
  }
}

const open = new Map<string, { log: RotatingLog; users: number }>();

/** The shared log of `path`; call the returned release once the writer is done. */
export function acquireLog(path: string, limits: LogLimits): { log: RotatingLog; release(): void } {
  let entry = open.get(path);
  if (entry === undefined) {
    entry = { log: new RotatingLog(path, limits), users: 0 };
    open.set(path, entry);
  }
  entry.users++;
  const held = entry;
  let released = false;
  return {
    log: held.log,
    release: () => {
      if (released) return;
      released = true;
      held.users--;
      if (held.users === 0) {
        open.delete(path);
        held.log.close();
      }
    },
  };
}
