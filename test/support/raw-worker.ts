// A raw worker stream for tests that play a misbehaving (or hostile) worker: it writes any
// batch object (serialized by protobuf, so garbage values must still fit the schema) or any
// raw bytes (a custom serializer passes a Buffer through untouched), records the server's
// frames and the status the stream ends with.

import * as grpc from "@grpc/grpc-js";
import {
  type AttemptRef,
  type ServerFrame,
  type WorkerFrame,
  workerService,
} from "../../src/protocol/worker-stream/index.ts";

const connect = workerService.Connect as grpc.MethodDefinition<unknown, unknown>;

export interface StreamEnd {
  readonly code: grpc.status;
  readonly details: string;
}

export interface RawStream {
  /** A WorkerBatch object, or raw bytes sent as the whole message. */
  send(message: object | Buffer): void;
  readonly received: ServerFrame[];
  readonly ended: Promise<StreamEnd>;
  /** Resolves once a frame matching `check` has arrived; rejects if the stream ends first. */
  until(check: (frame: ServerFrame) => boolean, what: string): Promise<ServerFrame>;
  close(): void;
}

/** Opens `Connect` on `address` with `token` (none: no authorization metadata). */
export function openRaw(address: string, token: string | undefined): RawStream {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), {
    // Each raw stream on its own connection, as separate worker processes would be.
    "grpc.use_local_subchannel_pool": 1,
  });
  const metadata = new grpc.Metadata();
  if (token !== undefined) metadata.set("authorization", `Bearer ${token}`);
  const call = client.makeBidiStreamRequest(
    connect.path,
    (value: unknown) =>
      Buffer.isBuffer(value) ? value : (connect.requestSerialize(value) as Buffer),
    (bytes: Buffer) => connect.responseDeserialize(bytes),
    metadata,
  );
  const received: ServerFrame[] = [];
  let waiters: { check: (f: ServerFrame) => boolean; done: (f: ServerFrame) => void }[] = [];
  let end: StreamEnd | undefined;
  const ended = new Promise<StreamEnd>((resolve) => {
    call.on("status", (status: grpc.StatusObject) => {
      end ??= { code: status.code, details: status.details };
      resolve(end);
      client.close();
    });
  });
  call.on("error", () => {});
  call.on("data", (batch: { frames: ServerFrame[] }) => {
    for (const frame of batch.frames) {
      received.push(frame);
      waiters = waiters.filter((w) => {
        if (!w.check(frame)) return true;
        w.done(frame);
        return false;
      });
    }
  });
  return {
    send: (message) => {
      call.write(message);
    },
    received,
    ended,
    until: (check, what) => {
      const seen = received.find(check);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((done, fail) => {
        waiters.push({ check, done });
        void ended.then((e) =>
          fail(new Error(`stream ended (${e.code} ${e.details}) before ${what}`)),
        );
      });
    },
    close: () => {
      call.cancel();
      client.close();
    },
  };
}

/** A hello frame with sensible defaults; `fields` override them. */
export function hello(fields: Record<string, unknown> = {}): WorkerFrame {
  return {
    frame: "hello",
    hello: {
      name: "raw",
      kind: "module",
      namespace: "default",
      task_queue: "q",
      concurrency: 4,
      deployment: "",
      actions: [{ action: "add", capabilities: [] }],
      instance_id: "raw-instance",
      running: [],
      ...fields,
    },
  } as WorkerFrame;
}

export const completion = (ref: AttemptRef, output_json: string): WorkerFrame => ({
  frame: "completion",
  completion: { ref, output_json },
});

export const isWelcome = (f: ServerFrame) => f.frame === "welcome";
