import { join } from "node:path";
import { after } from "node:test";
import { StoreClient, type StoreClientOptions } from "../../../src/store/client/client.ts";
import type { StoreEngineOptions } from "../../../src/store/engine/index.ts";
import { type StoreServerOptions, startStoreServer } from "../../../src/store/transport/server.ts";
import { freshStore } from "../engine/fixture.ts";

/** A real store served on a real Unix socket in a temp dir. */
export async function servedStore(
  server: Partial<Omit<StoreServerOptions, "socketPath">> = {},
  engine: Partial<StoreEngineOptions> = {},
) {
  const { store, dir } = await freshStore(engine);
  const socketPath = join(dir, "..", "s.sock");
  const running = await startStoreServer(store, {
    socketPath,
    maxFrame: 1 << 20,
    maxClients: 8,
    timeoutMs: 5000,
    ...server,
  });
  const clients: StoreClient[] = [];
  after(async () => {
    for (const c of clients) await c.close();
    await running.close();
  });
  return {
    store,
    socketPath,
    server: running,
    async connect(options: StoreClientOptions = {}) {
      const client = await StoreClient.connect(socketPath, { client: "tester", ...options });
      clients.push(client);
      return client;
    },
  };
}
