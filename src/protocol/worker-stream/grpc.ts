/**
 * The worker service, loaded from `proto/worker.proto` at start-up with @grpc/proto-loader (no
 * generated code, no build step), and the endpoint grammar both ends share.
 */

import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

export const PROTO_PATH = fileURLToPath(new URL("../../../proto/worker.proto", import.meta.url));

const packageDefinition = protoLoader.loadSync(PROTO_PATH, {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  arrays: true,
  oneofs: true,
});
const loaded = grpc.loadPackageDefinition(packageDefinition) as unknown as {
  skein: { worker: { v1: { WorkerService: grpc.ServiceClientConstructor } } };
};

/**
 * The service as proto-loader defines it: codec.ts takes its method (path, and the schema
 * path's deserializers) from it, and tests play a raw peer with it. Both ends run on
 * codec.ts's `codecWorkerService` and `WorkerStreamClient`.
 */
export const workerService: grpc.ServiceDefinition = loaded.skein.worker.v1.WorkerService.service;

/** Parses an endpoint given as `host:port` or `http://host:port` into grpc-js's target form. */
export function grpcTarget(
  endpoint: string,
  options: { allowPortZero?: boolean } = {},
): string | undefined {
  const m = /^(?:http:\/\/)?(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})\/?$/.exec(endpoint);
  if (m === null) return undefined;
  const port = Number(m[2]);
  if (port > 65535 || (port === 0 && options.allowPortZero !== true)) return undefined;
  return `${m[1]}:${port}`;
}
