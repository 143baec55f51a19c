/**
 * The gRPC worker endpoint: a grpc-js server with the matcher's `Connect` handler, fed by
 * TCP listeners of our own (grpc-js's connection injector) so that the endpoint can bound
 * what unauthenticated peers cost: at most `maxConnections` connections at once (one more
 * is closed as soon as it is accepted), a connection with no call open (one that never
 * even sent the HTTP/2 preface, say) is closed after `idleConnectionMs`, and a connection
 * opens at most GRPC_MAX_STREAMS_PER_CONNECTION calls at once. Keepalive pings find workers
 * that vanished without closing their socket, so their attempts are detached promptly; a
 * worker killed outright closes its socket and is seen at once.
 */

import { lookup } from "node:dns/promises";
import { createServer, type Server as NetServer, type Socket } from "node:net";
import * as grpc from "@grpc/grpc-js";
import { codecWorkerService } from "../../protocol/worker-stream/codec.ts";
import { grpcTarget } from "../../protocol/worker-stream/index.ts";
import { workflowError } from "../errors.ts";
import { Matcher } from "../matching/matcher.ts";
import { type WorkerStreamOptions, workerStreamHandler } from "./worker-stream.ts";

/**
 * Connections the endpoint holds at once. Each costs a file descriptor and an HTTP/2
 * session; a worker process needs one. Far above any real fleet on one server, far below
 * the descriptor limit, so silent connections cannot starve the HTTP listener.
 */
export const GRPC_MAX_CONNECTIONS = 4096;
/**
 * A connection with no call open for this long is closed (gRPC's max connection idle): one
 * that never sent the preface, or whose last stream ended. Workers always hold their
 * stream; a client that dials again is unaffected. As long as the hello timeout.
 */
export const GRPC_IDLE_CONNECTION_MS = 10_000;
/** Calls one connection may have open at once: a worker process opens one per session. */
export const GRPC_MAX_STREAMS_PER_CONNECTION = 64;
/** The largest worker message: it carries an activity's output JSON. */
export const GRPC_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface WorkerEndpointOptions extends WorkerStreamOptions {
  /** Connections held at once (GRPC_MAX_CONNECTIONS). */
  readonly maxConnections?: number;
  /** Idle connections are closed after this (GRPC_IDLE_CONNECTION_MS). */
  readonly idleConnectionMs?: number;
}

export interface WorkerEndpoint {
  readonly matcher: Matcher;
  /** The bound port (useful with a listen address ending in `:0`). */
  readonly port: number;
  /** Stops accepting, ends every worker stream, resolves when the server is down. */
  close(): Promise<void>;
}

/** Starts the worker endpoint on `listen` (`host:port`, port 0 for any free port). */
export async function startWorkerEndpoint(
  listen: string,
  options: WorkerEndpointOptions,
): Promise<WorkerEndpoint> {
  const target = grpcTarget(listen, { allowPortZero: true });
  if (target === undefined) {
    throw workflowError(
      "invalid_listen",
      `grpc listen address ${JSON.stringify(listen)} is not host:port`,
    );
  }
  const matcher = new Matcher(options);
  const server = new grpc.Server({
    "grpc.keepalive_time_ms": 10_000,
    "grpc.keepalive_timeout_ms": 5_000,
    "grpc.keepalive_permit_without_calls": 1,
    "grpc.max_receive_message_length": GRPC_MAX_MESSAGE_BYTES,
    "grpc.max_connection_idle_ms": options.idleConnectionMs ?? GRPC_IDLE_CONNECTION_MS,
    "grpc.max_concurrent_streams": GRPC_MAX_STREAMS_PER_CONNECTION,
  });
  server.addService(codecWorkerService, { Connect: workerStreamHandler(matcher, options) });
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const admit = connectionGate(options.maxConnections ?? GRPC_MAX_CONNECTIONS, (socket) =>
    injector.injectConnection(socket),
  );
  let listeners: NetServer[];
  try {
    listeners = await listenAll(target, admit, (error) =>
      // Out of descriptors, say: this connection is lost, the endpoint serves on.
      options.logger?.warn({ err: error }, "worker endpoint could not accept a connection"),
    );
  } catch (error) {
    server.forceShutdown();
    throw workflowError(
      "listen_failed",
      `cannot listen on ${target}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const port = (listeners[0]!.address() as { port: number }).port;
  return {
    matcher,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        matcher.closeAll();
        for (const l of listeners) l.close();
        // Also closes the injector's sessions: every connection handed to it.
        server.forceShutdown();
        resolve();
      }),
  };
}

/** Hands accepted sockets on while fewer than `max` are open; closes the others at once. */
function connectionGate(max: number, inject: (socket: Socket) => void): (socket: Socket) => void {
  let open = 0;
  return (socket) => {
    if (open >= max) {
      socket.on("error", () => {});
      socket.destroy();
      return;
    }
    open++;
    socket.once("close", () => open--);
    inject(socket);
  };
}

/**
 * Listens on every address `host` resolves to (as grpc-js's own bind does), all on one port:
 * the first one's, when the port asked for is 0. Fails only when none can be bound.
 */
async function listenAll(
  target: string,
  admit: (socket: Socket) => void,
  onError: (error: Error) => void,
): Promise<NetServer[]> {
  const colon = target.lastIndexOf(":");
  const host = target.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
  let port = Number(target.slice(colon + 1));
  const addresses = await lookup(host, { all: true });
  const listeners: NetServer[] = [];
  let firstError: unknown;
  for (const { address } of addresses) {
    const listener = createServer(admit);
    try {
      await new Promise<void>((resolve, reject) => {
        listener.once("error", reject);
        listener.listen(port, address, () => {
          listener.off("error", reject);
          resolve();
        });
      });
    } catch (error) {
      firstError ??= error;
      continue;
    }
    listener.on("error", onError);
    port = (listener.address() as { port: number }).port;
    listeners.push(listener);
  }
  if (listeners.length === 0) throw firstError ?? new Error(`${host} resolves to no address`);
  return listeners;
}
