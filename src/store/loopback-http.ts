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
  /**
   * Deadline for a request's headers, in ms from its first byte (Node answers 408 and
   * closes); unset keeps Node's default. (mcp-http's `header_timeout_ms`.)
   */
  readonly headerTimeoutMs?: number;
  /** Bounds on a browser request (the door's); Node's defaults without them. */
  readonly limits?: {
    /** Largest request head (request line and headers); past it Node answers 431. */
    readonly headBytes: number;
    /** Reading a request (head, then all of it) and each idle wait while writing. */
    readonly ioMs: number;
  };
}

/**
 * Longest pause between two checks of the header deadline: Node checks it on an interval
 * (30 s by default), so a short deadline needs a shorter one to be kept to within a second.
 */
export const HEADER_DEADLINE_CHECK_MAX_MS = 1000;

/** Largest timer Node keeps exactly (2^31 - 1 ms); longer deadlines are capped to it. */
const TIMER_MAX_MS = 2_147_483_647;

function serverOptions(headerTimeoutMs: number | undefined) {
  if (headerTimeoutMs === undefined) return {};
  const headersTimeout = Math.min(headerTimeoutMs, TIMER_MAX_MS);
  return {
    headersTimeout,
    // The whole-request bound must not be below the header bound; the body has its own.
    requestTimeout: 0,
    connectionsCheckingInterval: Math.max(
      1,
      Math.min(HEADER_DEADLINE_CHECK_MAX_MS, Math.floor(headersTimeout / 4)),
    ),
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
    {
      ...serverOptions(options.headerTimeoutMs),
      ...(limits === undefined ? {} : { maxHeaderSize: limits.headBytes }),
    },
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
