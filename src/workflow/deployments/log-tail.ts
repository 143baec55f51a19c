/**
 * The last lines of a deployment's worker log (`<data_dir>/deployments/logs/<name>.log`),
 * read backwards from the end in fixed chunks and never more than TAIL_MAX_BYTES, so a
 * 10 MiB log is never read whole into memory. Only the current file is read: lines rotated
 * into `<name>.log.1` are not joined back. A log not written yet reads as no lines.
 */

import { open } from "node:fs/promises";

/** The most bytes one tail reads from the end of the file. */
export const TAIL_MAX_BYTES = 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;

/** The last `lines` lines of the file (without their newlines); [] when it does not exist. */
export async function tailLines(path: string, lines: number): Promise<string[]> {
  let file: Awaited<ReturnType<typeof open>>;
  try {
    file = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  try {
    const size = (await file.stat()).size;
    const floor = Math.max(0, size - TAIL_MAX_BYTES);
    const chunks: Buffer[] = [];
    let position = size;
    let newlines = 0;
    // One newline more than asked: the line before the first kept one is then complete.
    while (position > floor && newlines <= lines) {
      const length = Math.min(CHUNK_BYTES, position - floor);
      position -= length;
      const chunk = Buffer.alloc(length);
      await file.read(chunk, 0, length, position);
      chunks.unshift(chunk);
      for (const byte of chunk) if (byte === 0x0a) newlines++;
    }
    const split = Buffer.concat(chunks).toString("utf8").split("\n");
    // A final newline ends the last line; it does not start an empty one.
    if (split.at(-1) === "") split.pop();
    // The first piece may be the tail of a longer line, unless reading reached the start.
    if (position > 0) split.shift();
    return split.slice(-lines);
  } finally {
    await file.close();
  }
}
