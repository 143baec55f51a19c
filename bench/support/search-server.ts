/**
 * A store served as `serve` serves it, for the search benchmarks: the embedding service,
 * the search service and the socket server in this process, and socket clients to load it.
 */

import { join } from "node:path";
import { silentLogger } from "../../src/common/log.ts";
import { StoreClient } from "../../src/store/client/client.ts";
import type { EmbedSettings } from "../../src/store/config/types.ts";
import { EmbedService } from "../../src/store/embed/service.ts";
import type { Store } from "../../src/store/engine/index.ts";
import { SearchService } from "../../src/store/search/service.ts";
import { startStoreServer } from "../../src/store/transport/server.ts";

export interface SearchServer {
  readonly embed: EmbedService;
  readonly search: SearchService;
  readonly clients: StoreClient[];
  /** Closes the clients, the server and the services (not the store). */
  close(): Promise<void>;
}

export async function serveSearch(
  store: Store,
  dataDir: string,
  settings: EmbedSettings,
  connections: number,
  indexMin?: number,
): Promise<SearchServer> {
  const embed = await EmbedService.start(settings, silentLogger());
  if (embed.failure !== undefined) throw embed.failure;
  const search = new SearchService(store, embed, { dataDir, indexMin }, silentLogger());
  const socketPath = join(dataDir, "bench.sock");
  const server = await startStoreServer(store, {
    socketPath,
    maxFrame: 16 << 20,
    maxClients: 64,
    timeoutMs: 600_000,
    embed,
    search,
  });
  const clients = await Promise.all(
    Array.from({ length: connections }, () =>
      StoreClient.connect(socketPath, { timeoutMs: 600_000 }),
    ),
  );
  return {
    embed,
    search,
    clients,
    async close() {
      for (const c of clients) await c.close();
      await server.close();
      await embed.close();
      await search.close();
    },
  };
}
