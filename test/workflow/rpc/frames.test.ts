// The worker stream's edge against raw gRPC clients: every frame is decoded before the
// matcher reads it (a bad one ends that stream with a named refusal, the endpoint serves
// on), names with control characters are refused, re-attach is bounded to the session's own
// namespace, queue and concurrency and detached attempts are not kept forever, and silent
// TCP connections are closed and capped.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { connect, type Socket } from "node:net";
import { describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import type { AttemptRef } from "../../../src/protocol/worker-stream/index.ts";
import {
  completion,
  hello,
  isWelcome,
  openRaw,
  type RawStream,
  type StreamEnd,
} from "../../support/raw-worker.ts";
import { until } from "../../support/until.ts";
import {
  ACTIVITIES,
  offer,
  sessions,
  spawnWorker,
  startEndpoint,
  tempDir,
  tokenFile,
  writeJson,
} from "../../support/worker-endpoint.ts";

const TOKEN = "worker-all";

/**
 * The stream's end, or a failure naming what was expected when it stays open (the deadline
 * is until()'s: generous, as the machine is shared).
 */
function ends(stream: RawStream, what: string, ms = 30_000): Promise<StreamEnd> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`stream still open, expected ${what}`)), ms);
  });
  return Promise.race([stream.ended, late]).finally(() => clearTimeout(timer));
}

const ref = (fields: Partial<AttemptRef> = {}) => ({
  run_id: randomUUID(),
  activity_id: 1,
  attempt: 1,
  ...fields,
});

describe("every worker frame is decoded; a bad one ends that stream only", () => {
  const heartbeats = (n: number) =>
    Array.from({ length: n }, () => ({ heartbeat: { ref: ref(), details_json: "" } }));
  const rows: [name: string, message: object | Buffer, refusal: RegExp][] = [
    ["a frame with no oneof set", { frames: [{}] }, /^invalid_frame: frames\[0\]\.frame: missing/],
    [
      "a heartbeat with a null ref",
      { frames: [{ heartbeat: { details_json: "{}" } }] },
      /^invalid_frame: frames\[0\]\.heartbeat\.ref: null is not accepted/,
    ],
    [
      "a completion for attempt 0",
      { frames: [{ completion: { ref: ref({ attempt: 0 }), output_json: "1" } }] },
      /^invalid_frame: frames\[0\]\.completion\.ref\.attempt: must be/,
    ],
    [
      "a failure whose run id is not a UUID",
      { frames: [{ failure: { ref: ref({ run_id: "nope" }), code: "x", message: "" } }] },
      /^invalid_frame: frames\[0\]\.failure\.ref\.run_id: must be a UUID/,
    ],
    [
      "a failure code with a newline",
      { frames: [{ failure: { ref: ref(), code: "a\nb", message: "" } }] },
      /^invalid_frame: frames\[0\]\.failure\.code: must not contain control characters/,
    ],
    ["a second hello", { frames: [hello()] }, /^invalid_frame: hello: a session sends one hello/],
    [
      "more frames than a batch may hold",
      { frames: heartbeats(4097) },
      /^invalid_frame: frames: must have at most 4096 items/,
    ],
    [
      "bytes that are not protobuf",
      Buffer.from([0x0a, 0xff, 0xff, 0x01]),
      /^invalid_frame: not a valid WorkerBatch/,
    ],
    [
      "a message of 140,000 empty frames",
      Buffer.alloc(280_000, Buffer.from([0x0a, 0x00])),
      /^invalid_frame: holds more than 131072 items/,
    ],
  ];
  for (const [name, message, refusal] of rows) {
    test(name, async () => {
      const { endpoint, address } = await startEndpoint();
      const s = openRaw(address, TOKEN);
      try {
        s.send({ frames: [hello()] });
        await s.until(isWelcome, "the welcome");
        s.send(message);
        const end = await ends(s, "a refusal");
        assert.equal(end.code, grpc.status.INVALID_ARGUMENT);
        assert.match(end.details, refusal);
        // The endpoint serves on: a new stream is welcomed.
        const next = openRaw(address, TOKEN);
        next.send({ frames: [hello()] });
        await next.until(isWelcome, "a welcome after the refusal");
        next.close();
      } finally {
        s.close();
        await endpoint.close();
      }
    });
  }

  test("a bad first frame is refused before any hello", async () => {
    const { endpoint, address } = await startEndpoint();
    const s = openRaw(address, TOKEN);
    try {
      s.send({ frames: [{ completion: { output_json: "1" } }] });
      const end = await ends(s, "a refusal");
      assert.equal(end.code, grpc.status.INVALID_ARGUMENT);
      assert.match(end.details, /^invalid_frame: frames\[0\]\.completion\.ref: null/);
    } finally {
      s.close();
      await endpoint.close();
    }
  });

  test("after the bad streams, a real worker still completes activities", async () => {
    const { endpoint, recorder, address } = await startEndpoint();
    const dir = await tempDir();
    const doc = await writeJson(dir, "module.json", {
      name: "w",
      task_queue: "q",
      actions: { add: { module: ACTIVITIES, export: "add" } },
    });
    const bad = openRaw(address, TOKEN);
    bad.send(Buffer.from([0xff, 0xff]));
    await ends(bad, "a refusal");
    const w = spawnWorker([
      "module",
      doc,
      "--endpoint",
      address,
      "--token-file",
      await tokenFile(dir, TOKEN),
    ]);
    try {
      await sessions(endpoint, 1);
      const task = offer("add", { a: 2, b: 2 });
      endpoint.matcher.offer(task);
      assert.deepEqual(await recorder.waitResult(task.ref), {
        type: "completed",
        ref: task.ref,
        output: '{"sum":4}',
      });
    } finally {
      w.kill();
      await w.exited;
      await endpoint.close();
    }
  });
});

describe("names with control characters", () => {
  test("a queue named x NUL c never receives namespace ns NUL x's task", async () => {
    const { endpoint, address } = await startEndpoint();
    const s = openRaw(address, TOKEN);
    try {
      const task = offer("add", {}, { namespace: "ns\u0000x", taskQueue: "c" });
      assert.equal(endpoint.matcher.offer(task), "queued");
      s.send({ frames: [hello({ namespace: "ns", task_queue: "x\u0000c" })] });
      const end = await ends(s, "a refusal");
      assert.equal(end.code, grpc.status.INVALID_ARGUMENT);
      assert.match(
        end.details,
        /^invalid_hello: frames\[0\]\.hello\.task_queue: must not contain control characters/,
      );
      assert.deepEqual(s.received, []);
      assert.equal(endpoint.matcher.stats().waiting, 1);
    } finally {
      s.close();
      await endpoint.close();
    }
  });

  for (const [field, value] of [
    ["namespace", "a\nb"],
    ["name", "w\u0000"],
    ["task_queue", "q\u202E"],
  ] as const) {
    test(`a hello ${field} with a control character is refused`, async () => {
      const { endpoint, address } = await startEndpoint();
      const s = openRaw(address, TOKEN);
      try {
        s.send({ frames: [hello({ [field]: value })] });
        const end = await ends(s, "a refusal");
        assert.match(end.details, new RegExp(`^invalid_hello: frames\\[0\\]\\.hello\\.${field}: `));
      } finally {
        s.close();
        await endpoint.close();
      }
    });
  }
});

describe("re-attach", () => {
  test("an attempt detached from namespace b cannot be re-attached from namespace a", async () => {
    const { endpoint, recorder, address } = await startEndpoint();
    const task = offer("add", {}, { namespace: "b" });
    const b = openRaw(address, TOKEN);
    const a = openRaw(address, TOKEN);
    const b2 = openRaw(address, TOKEN);
    try {
      b.send({ frames: [hello({ namespace: "b" })] });
      await b.until(isWelcome, "b's welcome");
      assert.equal(endpoint.matcher.offer(task), "dispatched");
      await b.until((f) => f.frame === "task", "b's task");
      b.close();
      await until("the attempt to be detached", () => recorder.detached.length === 1);

      a.send({ frames: [hello({ namespace: "a", running: [{ ref: task.ref, action: "add" }] })] });
      const end = await ends(a, "a refusal");
      assert.equal(end.code, grpc.status.PERMISSION_DENIED);
      assert.match(end.details, /^reattach_refused: hello\.running\[0\]: attempt .* namespace "a"/);
      assert.deepEqual(recorder.attached, []);

      // Its own namespace's worker re-attaches it, and only that result is reported.
      b2.send({ frames: [hello({ namespace: "b", running: [{ ref: task.ref, action: "add" }] })] });
      await b2.until(isWelcome, "b2's welcome");
      b2.send({ frames: [completion(task.ref, '"genuine"')] });
      const result = await recorder.waitResult(task.ref);
      assert.deepEqual(result, { type: "completed", ref: task.ref, output: '"genuine"' });
    } finally {
      for (const s of [a, b, b2]) s.close();
      await endpoint.close();
    }
  });

  test("a hello re-attaches at most its concurrency; detached phantoms are forgotten", async () => {
    const { endpoint, address } = await startEndpoint({ bounds: { detachedTtlMs: 200 } });
    try {
      const phantoms = (n: number) =>
        Array.from({ length: n }, () => ({ ref: ref(), action: "add" }));
      // More than HELD_PER_SLOT × concurrency: refused by name.
      const over = openRaw(address, TOKEN);
      over.send({ frames: [hello({ concurrency: 2, running: phantoms(9) })] });
      const end = await ends(over, "a refusal");
      assert.match(
        end.details,
        /^invalid_hello: frames\[0\]\.hello\.running: must list at most 4 × concurrency \(8\) attempts, found 9/,
      );
      // Twenty sessions each listing 8 phantoms hold at most 2 each, and none once closed.
      const streams: RawStream[] = [];
      for (let i = 0; i < 20; i++) {
        const s = openRaw(address, TOKEN);
        s.send({ frames: [hello({ concurrency: 2, running: phantoms(8) })] });
        await s.until(isWelcome, "a welcome");
        streams.push(s);
      }
      assert.deepEqual(endpoint.matcher.stats(), { sessions: 20, holding: 40, waiting: 0 });
      for (const s of streams) s.close();
      await until("the sessions to close", () => endpoint.matcher.stats().sessions === 0);
      await until("the phantoms to be forgotten", () => endpoint.matcher.stats().holding === 0);
    } finally {
      await endpoint.close();
    }
  });
});

describe("connections", () => {
  const dial = (port: number) => {
    const socket = connect(port, "127.0.0.1");
    let bytes = 0;
    socket.on("data", (chunk) => {
      bytes += chunk.length;
    });
    socket.on("error", () => {});
    const closed = new Promise<void>((done) => socket.on("close", () => done()));
    return { socket, closed, bytes: () => bytes };
  };

  test("connections that send nothing are closed after the idle timeout", async () => {
    const { endpoint } = await startEndpoint({ bounds: { idleConnectionMs: 200 } });
    const silent = Array.from({ length: 20 }, () => dial(endpoint.port));
    try {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(silent.map((c) => c.closed)),
        new Promise((_, fail) => {
          timer = setTimeout(() => fail(new Error("silent connections still open")), 30_000);
        }),
      ]).finally(() => clearTimeout(timer));
    } finally {
      for (const c of silent) c.socket.destroy();
      await endpoint.close();
    }
  });

  test("connections beyond the cap are closed at once; a freed place is taken again", async () => {
    const { endpoint } = await startEndpoint({
      bounds: { maxConnections: 3, idleConnectionMs: 60_000 },
    });
    const open: { socket: Socket; closed: Promise<void>; bytes: () => number }[] = [];
    try {
      for (let i = 0; i < 3; i++) open.push(dial(endpoint.port));
      // An accepted connection gets the server's HTTP/2 settings.
      await until("the server's settings", () => open.every((c) => c.bytes() > 0));
      const extra = [dial(endpoint.port), dial(endpoint.port)];
      await Promise.all(extra.map((c) => c.closed));
      assert.deepEqual(
        extra.map((c) => c.bytes()),
        [0, 0],
      );
      open[0]!.socket.destroy();
      await open[0]!.closed;
      const again = dial(endpoint.port);
      open.push(again);
      await until("a connection in the freed place", () => again.bytes() > 0);
    } finally {
      for (const c of open) c.socket.destroy();
      await endpoint.close();
    }
  });
});
