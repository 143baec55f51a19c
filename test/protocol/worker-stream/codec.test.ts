// The worker stream's hand-written protobuf codec against the contract (proto/worker.proto,
// read by proto-loader as a standard peer would) and against the rules of decode.ts: what it
// writes a standard peer reads back unchanged; what a standard peer writes it reads as the
// schema path does; truncated bytes, wrong wire types and frames past their bounds are
// refused (never thrown); unknown fields and fields out of order are read; and over random
// and mutated batches it never accepts a value the schema path would not give.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";
import type * as grpc from "@grpc/grpc-js";
import { decode } from "../../../src/common/decode/index.ts";
import {
  BatchRefusal,
  decodeServerBatch,
  decodeWorkerBatch,
  encodeServerBatch,
  encodeWorkerBatch,
} from "../../../src/protocol/worker-stream/codec.ts";
import {
  scanWorkerBatch,
  serverBatchDecoder,
  workerBatchDecoder,
} from "../../../src/protocol/worker-stream/decode.ts";
import type { ServerFrame, WorkerFrame } from "../../../src/protocol/worker-stream/frames.ts";
import { workerService } from "../../../src/protocol/worker-stream/grpc.ts";

/** The standard peer: proto-loader's serializers for the same .proto. */
const peer = workerService.Connect as grpc.MethodDefinition<object, object>;

const ref = (fields: Partial<{ run_id: string; activity_id: number; attempt: number }> = {}) => ({
  run_id: randomUUID(),
  activity_id: 7,
  attempt: 1,
  ...fields,
});

const serverFrames = (): ServerFrame[] => [
  { frame: "welcome", welcome: { session_id: randomUUID(), agent_port: 7381 } },
  {
    frame: "task",
    task: {
      ref: ref(),
      namespace: "default",
      workflow_id: randomUUID(),
      action: "charge",
      input_json: '{"note":"é 😀 \\u0000","n":18446744073709551615}',
      start_to_close_ms: 2 ** 40,
      heartbeat_ms: 3000,
    },
  },
  { frame: "task", task: { ...taskDefaults(), ref: ref({ activity_id: 0 }) } },
  { frame: "cancel", cancel: { ref: ref({ attempt: 2 ** 32 - 1 }), reason: "the run failed" } },
  { frame: "ack", ack: { ref: ref() } },
];

function taskDefaults() {
  return {
    namespace: "",
    workflow_id: "",
    action: "",
    input_json: "",
    start_to_close_ms: 0,
    heartbeat_ms: 0,
  };
}

const hello = (): WorkerFrame => ({
  frame: "hello",
  hello: {
    name: "w",
    kind: "module",
    namespace: "default",
    task_queue: "q",
    concurrency: 16,
    deployment: "d@3",
    actions: [
      { action: "add", capabilities: ["Cancel"] },
      { action: "sub", capabilities: [] },
    ],
    instance_id: randomUUID(),
    running: [{ ref: ref(), action: "add" }],
  },
});

const workerFrames = (): WorkerFrame[] => [
  hello(),
  { frame: "heartbeat", heartbeat: { ref: ref(), details_json: "" } },
  { frame: "heartbeat", heartbeat: { ref: ref(), details_json: '{"step":"é"}' } },
  { frame: "completion", completion: { ref: ref(), output_json: "x".repeat(70_000) } },
  {
    frame: "failure",
    failure: { ref: ref(), code: "exit_status", message: "boom\nstderr é", non_retryable: true },
  },
  { frame: "failure", failure: { ref: ref(), code: "", message: "", non_retryable: false } },
];

/** The schema path alone (what the server did before the codec), for comparison. */
function schemaWorker(bytes: Buffer): WorkerFrame[] | string {
  const problem = scanWorkerBatch(bytes);
  if (problem !== undefined) return problem;
  try {
    const decoded = decode(workerBatchDecoder, peer.requestDeserialize(bytes));
    return decoded.ok ? decoded.value.frames : decoded.error.message;
  } catch (error) {
    return String(error);
  }
}

function schemaServer(bytes: Buffer): ServerFrame[] | string {
  try {
    const decoded = decode(serverBatchDecoder, peer.responseDeserialize(bytes));
    return decoded.ok ? decoded.value.frames : decoded.error.message;
  } catch (error) {
    return String(error);
  }
}

/** Frames as proto-loader gives them (oneof name in `frame`, the member beside it). */
function fromPeer(batch: object): unknown[] {
  return (batch as { frames: unknown[] }).frames.map((f) => {
    const { frame, ...member } = f as { frame: string };
    return { frame, ...member };
  });
}

// Hand-made wire bytes.
function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return out;
}
const field = (number: number, body: number[] | Buffer) => [
  ...varint(number * 8 + 2),
  ...varint(body.length),
  ...body,
];
const num = (number: number, value: number) => [...varint(number * 8), ...varint(value)];
const text = (s: string) => [...Buffer.from(s, "utf8")];
const refBytes = (r = ref()) => [
  ...field(1, text(r.run_id)),
  ...num(2, r.activity_id),
  ...num(3, r.attempt),
];
/** A WorkerBatch of one frame whose member `member` has body `body`. */
const workerBatch = (member: number, body: number[]) => Buffer.from(field(1, field(member, body)));
const serverBatch = workerBatch;

describe("what the codec writes, a standard peer reads back unchanged", () => {
  test("every server frame", () => {
    const frames = serverFrames();
    assert.deepEqual(fromPeer(peer.responseDeserialize(encodeServerBatch(frames))), frames);
    assert.deepEqual(decodeServerBatch(encodeServerBatch(frames)), frames);
  });

  test("every worker frame, the hello included", () => {
    const frames = workerFrames();
    assert.deepEqual(fromPeer(peer.requestDeserialize(encodeWorkerBatch(frames))), frames);
    assert.deepEqual(decodeWorkerBatch(encodeWorkerBatch(frames)), frames);
  });

  test("an empty batch is zero bytes", () => {
    assert.equal(encodeServerBatch([]).length, 0);
    assert.deepEqual(decodeServerBatch(Buffer.alloc(0)), []);
    assert.deepEqual(decodeWorkerBatch(Buffer.alloc(0)), []);
  });
});

describe("what a standard peer writes, the codec reads as the schema path does", () => {
  test("server frames (defaults written out, as protobufjs does)", () => {
    const frames = serverFrames();
    const bytes = peer.responseSerialize({ frames }) as Buffer;
    assert.deepEqual(decodeServerBatch(bytes), frames);
    assert.deepEqual(schemaServer(bytes), frames);
  });

  test("worker frames", () => {
    const frames = workerFrames();
    const bytes = peer.requestSerialize({ frames }) as Buffer;
    assert.deepEqual(decodeWorkerBatch(bytes), frames);
  });

  test("fields in reverse order and unknown fields of every wire type are read", () => {
    const r = ref();
    const unknown = [
      ...num(9, 5),
      ...field(10, [1, 2, 3]),
      ...[0x5d, 1, 2, 3, 4], // field 11, fixed32
      ...[0x61, 1, 2, 3, 4, 5, 6, 7, 8], // field 12, fixed64
    ];
    const refReversed = [
      ...num(3, r.attempt),
      ...unknown,
      ...num(2, r.activity_id),
      ...field(1, text(r.run_id)),
    ];
    const body = [...field(2, text('{"ok":1}')), ...unknown, ...field(1, refReversed)];
    const bytes = Buffer.from([...unknown, ...field(1, [...unknown, ...field(3, body)])]);
    const expected = [{ frame: "completion", completion: { ref: r, output_json: '{"ok":1}' } }];
    assert.deepEqual(decodeWorkerBatch(bytes), expected);
    assert.deepEqual(schemaWorker(bytes), expected);
  });
});

describe("bytes no peer may send are refused, never thrown", () => {
  const refusal = (result: unknown) => {
    assert.ok(result instanceof BatchRefusal, `expected a refusal, got ${JSON.stringify(result)}`);
    return result;
  };

  test("every truncation of a valid batch is a batch (at a frame's end) or a refusal", () => {
    const whole = encodeWorkerBatch(workerFrames().slice(1));
    for (let n = 0; n < whole.length; n += n < 300 ? 1 : 997) {
      const result = decodeWorkerBatch(whole.subarray(0, n));
      if (result instanceof BatchRefusal) {
        assert.equal(result.code, "invalid_frame");
        assert.match(
          result.message,
          /^not a valid WorkerBatch: truncated|^not a valid WorkerBatch/,
        );
      } else assert.ok(Array.isArray(result));
    }
    // Without the welcome, which the wire reader leaves to the schema path.
    const server = encodeServerBatch(serverFrames().slice(1));
    for (let n = 1; n < server.length; n++) {
      const result = decodeServerBatch(server.subarray(0, n));
      assert.ok(typeof result === "string" || Array.isArray(result));
    }
    assert.match(
      String(decodeServerBatch(server.subarray(0, server.length - 1))),
      /^not a valid ServerBatch: truncated/,
    );
  });

  test("a field with the wrong wire type", () => {
    // output_json (field 2) as a varint.
    const asVarint = workerBatch(3, [...field(1, refBytes()), ...num(2, 5)]);
    assert.equal(
      refusal(decodeWorkerBatch(asVarint)).message,
      "not a valid WorkerBatch: field 2 has wire type 0, expected 2",
    );
    // ref.attempt (field 3) as a length-delimited field.
    const r = ref();
    const badRef = [...field(1, text(r.run_id)), ...field(3, [1])];
    assert.match(
      refusal(decodeWorkerBatch(workerBatch(2, field(1, badRef)))).message,
      /field 3 has wire type 2, expected 0/,
    );
    // A task's start_to_close_ms (field 6) as fixed64.
    const task = [...field(1, refBytes()), 0x31, 0, 0, 0, 0, 0, 0, 0, 0];
    assert.match(String(decodeServerBatch(serverBatch(2, task))), /field 6 has wire type 1/);
  });

  test("an invalid wire type, a varint past ten bytes, a key of field 0", () => {
    assert.match(refusal(decodeWorkerBatch(Buffer.from([0x0f]))).message, /wire type 7/);
    const long = Buffer.from([0x10, ...Array(11).fill(0xff), 0x01]);
    assert.match(refusal(decodeWorkerBatch(long)).message, /varint too long/);
    assert.match(refusal(decodeWorkerBatch(Buffer.from([0x02, 0x00]))).message, /field key 2/);
  });
});

describe("values the rules refuse are refused with the rule's name", () => {
  const message = (result: unknown) => {
    assert.ok(result instanceof BatchRefusal, `expected a refusal, got ${JSON.stringify(result)}`);
    return `${result.code}: ${result.message}`;
  };

  test("oversized: more frames than a batch may hold", () => {
    const frames: WorkerFrame[] = Array.from({ length: 4097 }, () => ({
      frame: "completion",
      completion: { ref: ref(), output_json: "1" },
    }));
    assert.match(
      message(decodeWorkerBatch(encodeWorkerBatch(frames))),
      /^invalid_frame: frames: must have at most 4096 items/,
    );
    assert.equal((decodeWorkerBatch(encodeWorkerBatch(frames.slice(1))) as unknown[]).length, 4096);
  });

  test("oversized: a failure message past its bound", () => {
    const failure: WorkerFrame = {
      frame: "failure",
      failure: { ref: ref(), code: "x", message: "m".repeat(65_537), non_retryable: false },
    };
    assert.match(
      message(decodeWorkerBatch(encodeWorkerBatch([failure]))),
      /^invalid_frame: frames\[0\]\.failure\.message: must be at most 65536 bytes/,
    );
  });

  const rows: [name: string, body: number[], refusal: RegExp][] = [
    ["a frame with no member", [], /^invalid_frame: frames\[0\]\.frame: missing/],
    [
      "a completion without a ref",
      field(3, field(2, text("1"))),
      /^invalid_frame: frames\[0\]\.completion\.ref: null/,
    ],
    [
      "attempt 0",
      field(3, field(1, refBytes(ref({ attempt: 0 })))),
      /^invalid_frame: frames\[0\]\.completion\.ref\.attempt: must be/,
    ],
    [
      "a run id that is not a UUID",
      field(2, field(1, refBytes(ref({ run_id: "nope" })))),
      /^invalid_frame: frames\[0\]\.heartbeat\.ref\.run_id: must be a UUID/,
    ],
    [
      "a failure code with a control character",
      field(4, [...field(1, refBytes()), ...field(2, text("a\u202Eb"))]),
      /^invalid_frame: frames\[0\]\.failure\.code: must not contain control characters/,
    ],
    [
      "a hello with concurrency 0",
      field(1, [...field(1, text("w")), ...num(5, 0)]),
      /^invalid_hello: frames\[0\]\.hello\./,
    ],
  ];
  for (const [name, frame, refusal] of rows) {
    test(name, () => {
      assert.match(message(decodeWorkerBatch(Buffer.from(field(1, frame)))), refusal);
    });
  }

  test("server frames: a u64 past 2^53, an ack for attempt 0, a task without a ref", () => {
    const big = [...field(1, refBytes()), ...num(7, 2 ** 53 + 2)];
    assert.match(String(decodeServerBatch(serverBatch(2, big))), /heartbeat_ms/);
    const ack = field(1, refBytes(ref({ attempt: 0 })));
    assert.match(String(decodeServerBatch(serverBatch(4, ack))), /frames\[0\]\.ack\.ref\.attempt/);
    assert.match(
      String(decodeServerBatch(serverBatch(2, field(4, text("add"))))),
      /frames\[0\]\.task\.ref: null/,
    );
  });

  test("a u32 past its range is read as the schema path reads it (truncated by protobuf)", () => {
    const r = ref();
    const body = field(1, [...field(1, text(r.run_id)), ...num(2, 2 ** 32 + 5), ...num(3, 1)]);
    const bytes = workerBatch(3, body);
    assert.deepEqual(decodeWorkerBatch(bytes), schemaWorker(bytes));
  });
});

/** mulberry32: seeded, so a failure replays with its printed seed. */
function prng(seed: number) {
  let a = seed >>> 0;
  return (n: number) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

test("over random and mutated batches the codec accepts only what the schema path gives", (t) => {
  const seed = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
  t.diagnostic(`FUZZ_SEED=${seed}`);
  const int = prng(seed);
  const frames = [...workerFrames().slice(1), ...workerFrames().slice(1)];
  const bases = [
    encodeWorkerBatch(frames),
    peer.requestSerialize({ frames }) as Buffer,
    encodeWorkerBatch([hello(), ...frames.slice(0, 2)]),
  ];
  const serverBases = [
    encodeServerBatch(serverFrames()),
    peer.responseSerialize({ frames: serverFrames() }) as Buffer,
  ];
  const mutate = (base: Buffer) => {
    const out = Buffer.from(base.subarray(0, Math.min(base.length, 2000)));
    for (let i = 0, n = 1 + int(4); i < n; i++) out[int(out.length)] = int(256);
    return out;
  };
  for (let i = 0; i < 3000; i++) {
    const bytes = mutate(bases[int(bases.length)]!);
    const result = decodeWorkerBatch(bytes);
    if (!(result instanceof BatchRefusal)) {
      assert.deepEqual(result, schemaWorker(bytes), `seed ${seed}, bytes ${bytes.toString("hex")}`);
    }
    const serverBytes = mutate(serverBases[int(serverBases.length)]!);
    const server = decodeServerBatch(serverBytes);
    if (typeof server !== "string") {
      assert.deepEqual(server, schemaServer(serverBytes), `seed ${seed}`);
    }
  }
});
