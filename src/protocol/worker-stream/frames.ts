/**
 * The worker stream's messages, shared by the server's matcher and the builtin worker runtime.
 * `proto/worker.proto` defines them; these are its messages as TypeScript tagged unions, so
 * both sides switch on `frame` and never touch protobuf objects directly. Every stream message
 * is a batch of frames. The decoders that turn a received batch into these types are in
 * decode.ts; loading the service is in grpc.ts; batching writes is in batcher.ts.
 */

import type { AttemptRef } from "../attempt.ts";

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
