/**
 * The store-name lock: one live `serve` per store name and user. The lock is a file
 * `<runtime dir>/<name>.lock` holding the owner's process id, created atomically (written
 * under a temporary name, then hard-linked into place, which fails if the lock exists). A
 * lock whose process is gone is stale and is taken over; a live owner refuses the start
 * with `store_name_in_use`. Checking is separate from taking so a refused start creates
 * nothing.
 */

import { randomBytes } from "node:crypto";
import { link, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { STORE_NAME_IN_USE, startupRefusal } from "../errors.ts";

export function lockPathFor(runtimeDir: string, name: string): string {
  return join(runtimeDir, `${name}.lock`);
}

function alive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The live process holding the lock, or undefined when it is free or stale. */
export async function lockOwner(lockPath: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(lockPath, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const pid = Number.parseInt(text.trim(), 10);
  return pid !== process.pid && alive(pid) ? pid : undefined;
}

function inUse(name: string, pid: number) {
  return startupRefusal(
    STORE_NAME_IN_USE,
    "name",
    `store name ${JSON.stringify(name)} is served by another live process (pid ${pid})`,
  );
}

/** Refuses when a live process holds the name; creates nothing. */
export async function checkNameFree(runtimeDir: string, name: string): Promise<void> {
  const pid = await lockOwner(lockPathFor(runtimeDir, name));
  if (pid !== undefined) throw inUse(name, pid);
}

export interface NameLock {
  readonly path: string;
  release(): Promise<void>;
}

/** Takes the lock for this process, taking over a stale one. */
export async function acquireNameLock(runtimeDir: string, name: string): Promise<NameLock> {
  const path = lockPathFor(runtimeDir, name);
  const temp = join(runtimeDir, `.${name}.lock.${randomBytes(6).toString("hex")}`);
  await writeFile(temp, `${process.pid}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await link(temp, path);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw error;
        const pid = await lockOwner(path);
        if (pid !== undefined) throw inUse(name, pid);
        await unlink(path).catch(() => undefined);
      }
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      const pid = await lockOwner(path);
      throw inUse(name, pid ?? 0);
    }
    throw error;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  return {
    path,
    async release() {
      if ((await lockOwnerRaw(path)) === process.pid) await unlink(path).catch(() => undefined);
    },
  };
}

async function lockOwnerRaw(path: string): Promise<number | undefined> {
  try {
    return Number.parseInt((await readFile(path, "utf8")).trim(), 10);
  } catch {
    return undefined;
  }
}
