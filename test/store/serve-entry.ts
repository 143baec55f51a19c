/**
 * Test-only entry: opens (creating if needed) a store at argv[2] and serves it on the
 * socket argv[3], then prints "ready". Used by tests that need the store in a child
 * process they can SIGKILL.
 */

import { existsSync } from "node:fs";
import { createStore, ENGINE_DEFAULTS, openStore } from "../../src/store/engine/index.ts";
import { startStoreServer } from "../../src/store/transport/server.ts";

const [dir, socketPath] = process.argv.slice(2) as [string, string];
if (!existsSync(dir)) {
  await createStore(dir, { shards: 4, cacheBytesTotal: 64 << 20, executorThreads: 1 });
}
const store = openStore({
  dataDir: dir,
  branchCacheBytesPerShard: 4 << 20,
  maxPage: 1000,
  ...ENGINE_DEFAULTS,
});
await startStoreServer(store, { socketPath, maxFrame: 1 << 20, maxClients: 16, timeoutMs: 10_000 });
process.stdout.write("ready\n");
