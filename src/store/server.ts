/**
 * The store's listener: a Unix stream socket (mode 0600 inside a 0700 directory) that
 * admits at most `max_clients` connections and closes them all on shutdown. This is the
 * seam between start-up and the engine: `serve` hands it a checked `StoreStartup`, and the
 * protocol server (frames, hello, verbs) attaches to each accepted connection through
 * `onConnection`. Without a protocol attached, a connection is held open until the client
 * or the shutdown closes it.
 */

import { chmod } from "node:fs/promises";
import { createServer, type Socket } from "node:net";
import type { Logger } from "../common/log.ts";
import type { StoreStartup } from "./startup/plan.ts";
import { removeSocket } from "./startup/socket-path.ts";

export interface StoreServer {
  readonly socketPath: string;
  /** Stops accepting, closes every connection and removes the socket file. */
  close(): Promise<void>;
}

export interface StoreServerOptions {
  /** The protocol side of each admitted connection (the engine's socket transport). */
  readonly onConnection?: (socket: Socket) => void;
}

export async function startStoreServer(
  startup: StoreStartup,
  log: Logger,
  options: StoreServerOptions = {},
): Promise<StoreServer> {
  const connections = new Set<Socket>();
  const server = createServer((socket) => {
    connections.add(socket);
    socket.once("close", () => connections.delete(socket));
    socket.on("error", (error) => log.debug({ err: error }, "store connection error"));
    if (options.onConnection) options.onConnection(socket);
    else socket.resume();
  });
  // Node refuses (closes) connections beyond this count: the spec's client admission bound.
  const max = startup.config.max_clients;
  server.maxConnections =
    max > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(max);
  server.on("drop", () =>
    log.warn({ max_clients: String(max) }, "store client refused: max_clients reached"),
  );
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(startup.socketPath, () => {
      server.off("error", fail);
      done();
    });
  });
  await chmod(startup.socketPath, 0o600);
  log.info(
    { store: startup.name, socket: startup.socketPath, data_dir: startup.dataDir },
    "store listening",
  );
  let closing: Promise<void> | undefined;
  return {
    socketPath: startup.socketPath,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((done) => server.close(() => done()));
        for (const socket of connections) socket.destroy();
        await closed;
        await removeSocket(startup.socketPath);
        log.info({ store: startup.name }, "store stopped");
      })();
      return closing;
    },
  };
}
