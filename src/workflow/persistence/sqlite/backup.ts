/**
 * The SQLite online backup (`node:sqlite`'s `backup`, SQLite's backup API) of the server's
 * own connection: it copies a batch of pages per step on the thread pool while the
 * connection keeps serving; a change made through the same connection meanwhile is carried
 * into the copy, so the copy is the database as of the backup's end, and every commit
 * acknowledged before the backup began is in it. A step must not meet a write transaction
 * on the connection (backup-turns.ts says why and how the storage thread takes turns); it
 * is told of each step through `onStep`.
 *
 * The copy is written beside the target under a private `.partial` name, checked
 * (`PRAGMA quick_check`), then linked to the target with `link`, which refuses to replace an
 * existing file: a target that appears meanwhile is never overwritten, and a failed backup
 * leaves nothing at the target.
 */

import { randomBytes } from "node:crypto";
import { link, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { backup, DatabaseSync } from "node:sqlite";
import { workflowError } from "../../errors.ts";
import type { BackupResult } from "../store.ts";

/** Pages copied per step: small steps keep each pause of the connection short. */
const PAGES_PER_STEP = 256;

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

async function checkTarget(target: string): Promise<void> {
  const parent = await stat(dirname(target)).catch(() => undefined);
  if (parent?.isDirectory() !== true) {
    throw workflowError("invalid_backup_path", `${dirname(target)} is not a directory`);
  }
  if (
    await stat(target).then(
      () => true,
      () => false,
    )
  ) {
    throw workflowError("backup_exists", `${target} already exists; a backup never overwrites`);
  }
}

function quickCheck(file: string): void {
  const copy = new DatabaseSync(file, { readOnly: true });
  try {
    const row = copy.prepare("PRAGMA quick_check").get() as { quick_check: string };
    if (row.quick_check !== "ok")
      throw new Error(`the copy failed PRAGMA quick_check: ${row.quick_check}`);
  } finally {
    copy.close();
  }
}

/**
 * Why a backup failed, in words an operator can act on. node:sqlite ends a backup whose
 * first step found the connection writing (SQLITE_LOCKED before the page count is known)
 * with the destination's error code, 0: "not an error".
 */
function causeOf(error: unknown): string {
  const sqlite = error as { errcode?: unknown; errstr?: unknown; message?: unknown };
  if (sqlite.errcode === 0) {
    return "a backup step met a write transaction on the connection (SQLITE_LOCKED)";
  }
  if (typeof sqlite.errcode === "number") {
    return `SQLite: ${String(sqlite.message)} (code ${sqlite.errcode})`;
  }
  const errno = errnoCode(error);
  const message = error instanceof Error ? error.message : String(error);
  return errno === undefined ? message : `${errno}: ${message}`;
}

export async function backupDatabase(
  db: DatabaseSync,
  target: string,
  onStep: () => void = () => {},
): Promise<BackupResult> {
  await checkTarget(target);
  const partial = join(
    dirname(target),
    `.${basename(target)}.partial-${randomBytes(6).toString("hex")}`,
  );
  try {
    const pages = await backup(db, partial, { rate: PAGES_PER_STEP, progress: onStep });
    quickCheck(partial);
    await link(partial, target);
    const { size } = await stat(target);
    return { path: target, bytes: size, pages };
  } catch (error) {
    if (errnoCode(error) === "EEXIST") {
      throw workflowError("backup_exists", `${target} already exists; a backup never overwrites`);
    }
    throw workflowError(
      "backup_failed",
      `the backup to ${target} failed: ${causeOf(error)}`,
      error,
    );
  } finally {
    await rm(partial, { force: true });
  }
}
