/**
 * Files the services write or read on someone's behalf. `writeFileAtomic` makes a file
 * appear whole or not at all (a key or token file half written by a failed start would
 * block every later start); `readBoundedFile` reads a path a client named without letting
 * the path cost unbounded memory or time, or leak its contents into an error.
 */

import { randomBytes } from "node:crypto";
import { link, open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

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
