// The online backup of one SQLite connection (persistence/sqlite/backup.ts) on a real
// database file: a failure names its cause and leaves nothing at the target. The backup
// under sustained commits, through the storage thread, is in threaded-store.test.ts; the
// restore through the real server in test/workflow/http/backup.test.ts.

import assert from "node:assert/strict";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { SkeinError } from "../../../../src/common/errors.ts";
import { backupDatabase } from "../../../../src/workflow/persistence/sqlite/backup.ts";
import { openDatabase } from "../../../../src/workflow/persistence/sqlite/database.ts";

const dir = await mkdtemp(join(tmpdir(), "skein-backup-"));
after(() => rm(dir, { recursive: true, force: true }));

test("a first step that meets a write transaction is backup_failed naming SQLITE_LOCKED; nothing is left", async () => {
  const db = openDatabase(join(dir, "skein.db"));
  try {
    db.exec("CREATE TABLE t (x TEXT)");
    db.exec("BEGIN IMMEDIATE");
    db.prepare("INSERT INTO t VALUES (?)").run("x".repeat(10_000));
    await assert.rejects(
      backupDatabase(db, join(dir, "copy.db")),
      (error: unknown) =>
        error instanceof SkeinError &&
        error.code === "backup_failed" &&
        error.message.includes("SQLITE_LOCKED"),
    );
    db.exec("COMMIT");
  } finally {
    db.close();
  }
  assert.deepEqual(
    (await readdir(dir)).filter((name) => name.includes("copy")),
    [],
  );
});
