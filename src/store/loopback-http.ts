/**
 * The loopback HTTP listener shared by `door` and `mcp-http`: both listen on a numeric
 * loopback address behind a TLS proxy, admit at most `max_connections` connections, and
 * stop cleanly on shutdown. Routes are given by the caller as a request handler; a request
 * no route answers gets `404 {"error":{"code":"not_found",...}}`.
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Logger } from "../common/log.ts";
import type { ListenAddress } from "./config/addresses.ts";

export type Handler = (request: IncomingMessage, response: ServerResponse) => boolean;

export interface LoopbackHttpOptions {
  readonly listen: ListenAddress;
  readonly maxConnections: bigint;
  readonly log: Logger;
  /** Names the service in logs: "door" or "mcp-http". */
  readonly service: string;
  /** Answers a request and returns true, or returns false to leave it unrouted. */
  readonly handler?: Handler;
  /** Bounds on a browser request (the door's); Node's defaults without them. */
  readonly limits?: {
    /** Largest request head (request line and headers); past it Node answers 431. */
    readonly headBytes: number;
    /** Reading a request (head, then all of it) and each idle wait while writing. */
    readonly ioMs: number;
  };
}

export interface LoopbackHttp {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

function notFound(response: ServerResponse): void {
  const body = JSON.stringify({ error: { code: "not_found", message: "no such route" } });
  response.writeHead(404, { "content-type": "application/json", "content-length": body.length });
  response.end(body);
}

export async function startLoopbackHttp(options: LoopbackHttpOptions): Promise<LoopbackHttp> {
  const sockets = new Set<Socket>();
  const limits = options.limits;
  const server = createServer(
    limits === undefined ? {} : { maxHeaderSize: limits.headBytes },
    (request, response) => {
      if (options.handler?.(request, response) !== true) notFound(response);
    },
  );
  if (limits !== undefined) {
    server.headersTimeout = limits.ioMs;
    server.requestTimeout = limits.ioMs;
    // A browser that stops reading the answer (or sending) for this long is dropped.
    server.timeout = limits.ioMs;
  }
  const max = options.maxConnections;
  server.maxConnections =
    max > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(max);
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(options.listen.port, options.listen.host, () => {
      server.off("error", fail);
      done();
    });
  });
  const address = server.address() as AddressInfo;
  options.log.info({ host: address.address, port: address.port }, `${options.service} listening`);
  let closing: Promise<void> | undefined;
  return {
    host: address.address,
    port: address.port,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((done) => server.close(() => done()));
        for (const socket of sockets) socket.destroy();
        await closed;
        options.log.info(`${options.service} stopped`);
      })();
      return closing;
    },
  };
}
