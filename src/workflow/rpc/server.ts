/**
 * The gRPC worker endpoint: a grpc-js server with the matcher's `Connect` handler bound to a
 * listen address. Keepalive pings find workers that vanished without closing their socket,
 * so their attempts are detached promptly; a worker killed outright closes its socket and is
 * seen at once.
 */

import * as grpc from "@grpc/grpc-js";
import { SkeinError } from "../../common/errors.ts";
import { Matcher, type MatcherOptions } from "./matcher.ts";
import { grpcTarget, workerService } from "./protocol.ts";

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
  options: MatcherOptions,
): Promise<WorkerEndpoint> {
  const target = grpcTarget(listen, { allowPortZero: true });
  if (target === undefined) {
    throw new SkeinError(
      "invalid_listen",
      `grpc listen address ${JSON.stringify(listen)} is not host:port`,
    );
  }
  const matcher = new Matcher(options);
  const server = new grpc.Server({
    "grpc.keepalive_time_ms": 10_000,
    "grpc.keepalive_timeout_ms": 5_000,
    "grpc.keepalive_permit_without_calls": 1,
    "grpc.max_receive_message_length": 16 * 1024 * 1024,
  });
  server.addService(workerService, { Connect: matcher.connect });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(target, grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error
        ? reject(new SkeinError("listen_failed", `cannot listen on ${target}: ${error.message}`))
        : resolve(bound),
    );
  });
  return {
    matcher,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        matcher.closeAll();
        server.forceShutdown();
        resolve();
      }),
  };
}
