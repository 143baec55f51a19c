/**
 * Online backups: a compacted copy of the LMDB environment, made by LMDB's own copy
 * (`mdb_env_copy2` with `MDB_CP_COMPACT`, through lmdb-js) on a background thread inside one
 * read transaction, so the copy is one consistent version and the store goes on serving and
 * committing meanwhile. The result is a directory that is itself a store data directory
 * (`data.mdb` and the `skein-store.json` manifest): restoring is pointing `data_dir` at it.
 *
 * The target must not exist: it is claimed with an exclusive `mkdir` (so two backups, or a
 * backup and an existing directory, never share it), the copy is written beside it in a
 * private `.partial` directory, and only a finished copy is renamed onto the claim. A failed
 * backup leaves nothing at the target.
 */

import { randomBytes } from "node:crypto";
import { copyFile, mkdir, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { storeError } from "../errors.ts";
import { STORE_MANIFEST } from "../startup/data-dir.ts";
import type { StoreContext } from "./context.ts";

export interface BackupResult {
  readonly path: string;
  /** Bytes of the copied `data.mdb`. */
  readonly bytes: number;
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

export async function backupStore(ctx: StoreContext, target: string): Promise<BackupResult> {
  try {
    await mkdir(target, { mode: 0o700 });
  } catch (error) {
    if (errnoCode(error) === "EEXIST") {
      throw storeError("backup_exists", `${target} already exists; a backup never overwrites`);
    }
    throw storeError(
      "backup_failed",
      `cannot create ${target} (${errnoCode(error) ?? String(error)}); its parent must exist`,
    );
  }
  const partial = join(
    dirname(target),
    `.${basename(target)}.partial-${randomBytes(6).toString("hex")}`,
  );
  try {
    await mkdir(partial, { mode: 0o700 });
    await ctx.db.root.backup(partial, true);
    await copyFile(join(ctx.db.dir, STORE_MANIFEST), join(partial, STORE_MANIFEST));
    const { size } = await stat(join(partial, "data.mdb"));
    // Replaces the empty directory that claimed the name.
    await rename(partial, target);
    return { path: target, bytes: size };
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    await rm(target, { recursive: true, force: true });
    throw storeError(
      "backup_failed",
      `the copy to ${target} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
