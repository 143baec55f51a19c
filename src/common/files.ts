/**
 * Files the services write or read on someone's behalf. `writeFileAtomic` makes a file
 * appear whole or not at all (a key or token file half written by a failed start would
 * block every later start); `readBoundedFile` reads a path a client named without letting
 * the path cost unbounded memory or time, or leak its contents into an error.
 */

import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { type FileHandle, link, open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { SkeinError } from "./errors.ts";

export interface AtomicWriteOptions {
  /** Permission bits of the new file (the umask still applies), set from its creation. */
  readonly mode: number;
  /** Replace a file already at `path`; without it an existing file fails with EEXIST. */
  readonly replace?: boolean;
}

/**
 * Writes `data` to `path` so that `path` holds either nothing or all of `data`: a temp file
 * in the same directory (created with `mode`, never readable wider), written and fsynced,
 * then renamed over `path` (`replace`) or hard-linked to it (fails if `path` exists, so a
 * file another process wrote meanwhile is kept), and the directory fsynced so the new name
 * survives a crash. On any failure the temp file is removed and the error is thrown.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions,
): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const handle = await open(temp, "wx", options.mode);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (options.replace === true) await rename(temp, path);
    else await link(temp, path);
  } finally {
    await rm(temp, { force: true });
  }
  await syncDirectory(dir);
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The code of every refusal by `readBoundedFile` and `checkRegularFile`. */
export const FILE_REFUSED = "file_refused";

/**
 * How long reading one named file may take. A regular file on a local disk answers in
 * microseconds; a hung network mount must not hold the caller (the read itself may stay on
 * a libuv thread until the kernel returns, but nobody waits for it).
 */
export const FILE_READ_TIMEOUT_MS = 5_000;

export interface BoundedReadOptions {
  /** Refuse a file larger than this many bytes (measured by reading, not only by stat). */
  readonly maxBytes: number;
  readonly timeoutMs?: number;
}

/** A refusal of a named file: the message is `<path>: <reason>`; neither quotes the file. */
export class FileRefused extends SkeinError {
  readonly path: string;
  readonly reason: string;

  constructor(path: string, reason: string) {
    super(FILE_REFUSED, `${path}: ${reason}`);
    this.name = "FileRefused";
    this.path = path;
    this.reason = reason;
  }
}

function refused(path: string, reason: string): FileRefused {
  return new FileRefused(path, reason);
}

/**
 * Opens `path` for reading only if it is a regular file no larger than `maxBytes`. The
 * open never blocks (O_NONBLOCK: a FIFO or a device answers at once and is then refused by
 * fstat), so a path can name neither an endless stream (/dev/zero) nor a pipe nobody
 * writes. Refusals name the path and the reason, never anything read from the file.
 */
async function openRegular(path: string, maxBytes: number): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw refused(path, `cannot open (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw refused(path, "is not a regular file");
    if (info.size > maxBytes) throw refused(path, `is larger than ${maxBytes} bytes`);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Reads at most `maxBytes + 1` bytes: a file whose stat lies (procfs says 0) is still capped. */
async function readCapped(path: string, handle: FileHandle, maxBytes: number): Promise<Buffer> {
  const buffer = Buffer.alloc(maxBytes + 1);
  let length = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
    if (bytesRead === 0) break;
    length += bytesRead;
    if (length > maxBytes) throw refused(path, `is larger than ${maxBytes} bytes`);
  }
  return buffer.subarray(0, length);
}

function withTimeout<T>(path: string, work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(refused(path, `not read within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * Reads a file a client named: a regular file (symbolic links followed), at most
 * `maxBytes`, within `timeoutMs` (default FILE_READ_TIMEOUT_MS). Throws FileRefused (code
 * `file_refused`) naming the path; its contents never appear in an error.
 */
export async function readBoundedFile(path: string, options: BoundedReadOptions): Promise<Buffer> {
  const work = (async () => {
    const handle = await openRegular(path, options.maxBytes);
    try {
      return await readCapped(path, handle, options.maxBytes);
    } finally {
      await handle.close();
    }
  })();
  // A late read still closes its file; only its result is dropped.
  work.catch(() => {});
  return withTimeout(path, work, options.timeoutMs ?? FILE_READ_TIMEOUT_MS);
}

/** Checks, without reading it, that `path` is a regular file of at most `maxBytes`. */
export async function checkRegularFile(path: string, options: BoundedReadOptions): Promise<void> {
  const work = openRegular(path, options.maxBytes).then((handle) => handle.close());
  work.catch(() => {});
  return withTimeout(path, work, options.timeoutMs ?? FILE_READ_TIMEOUT_MS);
}
