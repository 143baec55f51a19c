/**
 * The store's socket server: it listens on the Unix socket (mode 0600: without idp the
 * socket is the store's whole access boundary), admits at most max_clients connections (an
 * excess one gets a `max_clients` refusal under id 0 and is closed), serves each through
 * connection.ts and runs their requests through the one queue of request-queue.ts. Freeing
 * nodes after a deleting verb runs in steps between turns (the store's stepped sweeps); such
 * a verb is answered when its sweep ends, and other requests are answered meanwhile.
 */

import { chmod } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import type { EmbedService } from "../embed/service.ts";
import type { Store } from "../engine/index.ts";
import { storeError } from "../errors.ts";
import type { IdpGate } from "../idp/gate.ts";
import type { QueryService } from "../query/service.ts";
import type { SearchService } from "../search/service.ts";
import { refusalFrame, serveConnection } from "./connection.ts";
import { requestQueue, type VerbObserver } from "./request-queue.ts";
import { servedVerbs, type VerbServices } from "./verbs.ts";

export type { VerbObserver } from "./request-queue.ts";

export interface StoreServerOptions {
  /** socket */
  readonly socketPath: string;
  /** max_frame */
  readonly maxFrame: number | bigint;
  /** max_clients */
  readonly maxClients: number | bigint;
  /** timeout_ms */
  readonly timeoutMs: number | bigint;
  /** With `idp`: hello needs a pass and every act is decided by the identity provider. */
  readonly idp?: IdpGate | null;
  /** The query group's service (null or absent: queries are refused as disabled). */
  readonly queries?: QueryService | null;
  /** The embedding group's service (null or absent: embedding verbs answer embed_disabled). */
  readonly embed?: EmbedService | null;
  /** Search over embedded fields (null or absent: search.text answers embed_disabled). */
  readonly search?: SearchService | null;
  /** Told of each queued request's answer: its verb, `ok` or the refusal code, seconds. */
  readonly observe?: VerbObserver;
}

export interface StoreServer {
  readonly clients: number;
  close(): Promise<void>;
}

export async function startStoreServer(
  store: Store,
  options: StoreServerOptions,
): Promise<StoreServer> {
  const maxFrame = Number(options.maxFrame);
  const maxClients = Number(options.maxClients);
  const services: VerbServices = {
    queries: options.queries ?? null,
    embed: options.embed ?? null,
    search: options.search ?? null,
  };
  const verbs = servedVerbs(services);
  const timeoutMs = Math.min(Number(options.timeoutMs), 2_147_483_647);
  // Between turns, not in one pause: requests are answered while nodes are freed.
  store.stepSweeps = true;
  const sockets = new Set<Socket>();
  const enqueue = requestQueue(store, services, options.observe);
  const everyone = new Set<Socket>();
  const server: Server = createServer((socket) => {
    everyone.add(socket);
    socket.on("close", () => everyone.delete(socket));
    if (sockets.size >= maxClients) {
      socket.end(
        refusalFrame(
          0,
          storeError("max_clients", `the store serves at most ${maxClients} clients`),
        ),
      );
      socket.on("error", () => {});
      return;
    }
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    serveConnection(socket, store, { maxFrame, timeoutMs }, enqueue, options.idp ?? null, verbs);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // Only this user may connect: the socket is the store's whole access boundary without
    // idp. The socket file is made with mode 0600 (bind runs inside listen, synchronously,
    // under this umask), so there is no moment at which it is open wider.
    const umask = process.umask(0o177);
    try {
      server.listen(options.socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    } finally {
      process.umask(umask);
    }
  });
  // Kept, should a platform create it otherwise.
  await chmod(options.socketPath, 0o600);
  return {
    get clients() {
      return sockets.size;
    },
    close() {
      for (const socket of everyone) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
