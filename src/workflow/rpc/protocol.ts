/**
 * The worker wire protocol, shared by the server's matcher and the builtin worker runtime.
 * `proto/worker.proto` is loaded at start-up with @grpc/proto-loader (no generated code, no
 * build step); this module gives its messages TypeScript types as tagged unions, so both
 * sides switch on `frame` and never touch protobuf objects directly. Every stream message is
 * a batch of frames; `FrameBatcher` collects the frames produced during one turn of the
 * event loop and writes them as one message, which is what keeps the stream cheap under load.
 */

import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

export const PROTO_PATH = fileURLToPath(new URL("../../../proto/worker.proto", import.meta.url));

/** One activity attempt: the run, the activity's position in it, the attempt from 1. */
export interface AttemptRef {
  run_id: string;
  activity_id: number;
  attempt: number;
}

export interface ActionCapabilities {
  action: string;
  capabilities: string[];
}

export interface Hello {
  name: string;
  kind: string;
  namespace: string;
  task_queue: string;
  concurrency: number;
  deployment: string;
  actions: ActionCapabilities[];
  instance_id: string;
  running: HeldAttempt[];
}

/** An attempt a reconnecting worker still holds, with its action (for its capabilities). */
export interface HeldAttempt {
  ref: AttemptRef;
  action: string;
}

export interface Heartbeat {
  ref: AttemptRef;
  details_json: string;
}

export interface Completion {
  ref: AttemptRef;
  output_json: string;
}

export interface Failure {
  ref: AttemptRef;
  code: string;
  message: string;
  non_retryable: boolean;
}

export interface Task {
  ref: AttemptRef;
  namespace: string;
  workflow_id: string;
  action: string;
  input_json: string;
  start_to_close_ms: number;
  heartbeat_ms: number;
}

export interface CancelActivity {
  ref: AttemptRef;
  reason: string;
}

export type WorkerFrame =
  | { frame: "hello"; hello: Hello }
  | { frame: "heartbeat"; heartbeat: Heartbeat }
  | { frame: "completion"; completion: Completion }
  | { frame: "failure"; failure: Failure };

export type ServerFrame =
  | { frame: "welcome"; welcome: { session_id: string; agent_port: number } }
  | { frame: "task"; task: Task }
  | { frame: "cancel"; cancel: CancelActivity }
  | { frame: "ack"; ack: { ref: AttemptRef } };

export interface WorkerBatch {
  frames: WorkerFrame[];
}
export interface ServerBatch {
  frames: ServerFrame[];
}

/** The capability a worker advertises for actions it can abort mid-flight. */
export const CANCEL_CAPABILITY = "Cancel";

/** The key of an attempt in maps: `run_id/activity_id/attempt`. */
export function attemptKey(ref: AttemptRef): string {
  return `${ref.run_id}/${ref.activity_id}/${ref.attempt}`;
}

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

/** The service definition a grpc-js server registers handlers against. */
export const workerService: grpc.ServiceDefinition = loaded.skein.worker.v1.WorkerService.service;
/** The client constructor the worker runtime connects with. */
export const WorkerServiceClient = loaded.skein.worker.v1.WorkerService;

export type WorkerStream = grpc.ServerDuplexStream<WorkerBatch, ServerBatch>;
export type ClientStream = grpc.ClientDuplexStream<WorkerBatch, ServerBatch>;

/**
 * Collects frames and writes them as one batch at the end of the current event-loop turn.
 * Every producer (completions, task dispatch, acks) just calls `push`; the cost of a stream
 * write is paid once per turn instead of once per frame.
 */
export class FrameBatcher<F> {
  #frames: F[] = [];
  #scheduled = false;
  readonly #write: (frames: F[]) => void;
  readonly #max: number;

  constructor(write: (frames: F[]) => void, maxFrames = 512) {
    this.#write = write;
    this.#max = maxFrames;
  }

  push(frame: F): void {
    this.#frames.push(frame);
    if (this.#frames.length >= this.#max) {
      this.flush();
      return;
    }
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.#scheduled = false;
    if (this.#frames.length === 0) return;
    const frames = this.#frames;
    this.#frames = [];
    this.#write(frames);
  }

  /** Drops frames not yet written (the stream they were meant for is gone). */
  clear(): void {
    this.#frames = [];
  }
}

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
