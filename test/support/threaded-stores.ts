// The server's threaded SQLite store (persistence/sqlite/threaded-store.ts) on fresh
// databases in temporary directories, for tests that open several: every store opened is
// closed and every directory removed when the test file ends.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { ThreadedSqliteStore } from "../../src/workflow/persistence/sqlite/threaded-store.ts";

export function threadedStores(prefix: string): {
  /** A database file in a directory of its own, not created yet. */
  fresh(): Promise<string>;
  /** The store on `file`, or on a fresh database. */
  open(file?: string): Promise<ThreadedSqliteStore>;
} {
  const dirs: string[] = [];
  const stores: ThreadedSqliteStore[] = [];
  after(async () => {
    for (const s of stores) await s.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  const fresh = async () => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    dirs.push(dir);
    return join(dir, "skein.db");
  };
  return {
    fresh,
    async open(file) {
      const store = await ThreadedSqliteStore.open(file ?? (await fresh()));
      stores.push(store);
      return store;
    },
  };
}
