/** The worker stream protocol: frames, their decoders, the gRPC service, the write batcher. */

export * from "../attempt.ts";
export * from "./batcher.ts";
export * from "./decode.ts";
export * from "./frames.ts";
export * from "./grpc.ts";
