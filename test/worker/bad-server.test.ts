// A worker facing a server that sends malformed frames (a task with no ref, a frame with no
// oneof set, an ack for attempt 0): the worker decodes every server message, treats a bad one
// like a lost stream (it reconnects, and gives up after its configured attempts with the
// refusal named), and never crashes on it.

import assert from "node:assert/strict";
import { test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { workerService } from "../../src/protocol/worker-stream/index.ts";
import { ACTIVITIES, spawnWorker, tempDir, writeJson } from "../support/worker-endpoint.ts";

async function badServer(frames: object[]): Promise<{ address: string; close: () => void }> {
  const server = new grpc.Server();
  server.addService(workerService, {
    Connect: (stream: grpc.ServerDuplexStream<unknown, unknown>) => {
      stream.on("error", () => {});
      stream.once("data", () => stream.write({ frames }));
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return { address: `127.0.0.1:${port}`, close: () => server.forceShutdown() };
}

const rows: [name: string, frames: object[], named: RegExp][] = [
  ["a task without a ref", [{ task: { action: "add" } }], /frames\[0\]\.task\.ref: null/],
  ["a frame with no oneof set", [{}], /frames\[0\]\.frame: missing/],
  [
    "an ack for attempt 0",
    [{ ack: { ref: { run_id: "00000000-0000-4000-8000-000000000000", attempt: 0 } } }],
    /frames\[0\]\.ack\.ref\.attempt: must be/,
  ],
];

for (const [name, frames, named] of rows) {
  test(`the worker survives ${name}: it reconnects, then gives up naming the frame`, async () => {
    const server = await badServer(frames);
    const dir = await tempDir();
    const doc = await writeJson(dir, "module.json", {
      name: "w",
      task_queue: "q",
      actions: { add: { module: ACTIVITIES, export: "add" } },
    });
    const w = spawnWorker([
      "module",
      doc,
      "--endpoint",
      server.address,
      "--reconnect-initial-backoff",
      "0.01",
      "--reconnect-max-attempts",
      "2",
    ]);
    try {
      assert.equal(await w.exited, 1);
      assert.match(w.stderr(), /gave up after 2 reconnect attempts to .*: invalid_frame: /);
      assert.match(w.stderr(), named);
      assert.doesNotMatch(w.stderr(), /TypeError/);
    } finally {
      w.kill();
      server.close();
    }
  });
}
