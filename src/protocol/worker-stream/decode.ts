/**
 * Decoders for both directions of the worker stream. protobuf gives the frames their types
 * only loosely (proto-loader lets through a frame with no oneof set, a null ref, a zero
 * attempt); these decoders turn every batch into the tagged unions of frames.ts once, at
 * the edge, with the rules protobuf cannot state (non-empty names without control
 * characters, a concurrency of at least 1, a UUID run id, an attempt from 1) and with the
 * decoding core's path-naming refusals (`frames[2].completion.ref.run_id: must be a UUID`).
 * The matcher and the worker runtime only ever see decoded frames.
 *
 * These are the rules; codec.ts reads the frames a running session sends all the time
 * straight from their bytes under the same rules and hands everything else to them. Before
 * protobuf decodes a worker's message for them, `scanWorkerBatch` walks its wire bytes and
 * counts the items it would allocate: a 16 MiB message of empty frames would otherwise
 * become millions of objects before any rule could refuse it.
 */

import {
  array,
  boolean,
  type Decoded,
  DecodeError,
  type Decoder,
  integer,
  object,
  refine,
  refuse,
  string,
  tagged,
  u32,
} from "../../common/decode/index.ts";
import { namespaceName } from "../namespace-name.ts";
import type { ServerFrame, WorkerFrame } from "./frames.ts";

/** `8-4-4-4-12` hex digits, checked by hand: this runs for every frame of every worker. */
export function isUuid(s: string): boolean {
  if (s.length !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = s.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d) return false;
    } else if (
      !((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46))
    ) {
      return false;
    }
  }
  return true;
}

export const MAX_CONCURRENCY = 4096;
/** A name (worker, task queue, action): long enough for any real one, short enough to key. */
export const MAX_NAME_BYTES = 256;
/**
 * Frames in one batch. The runtime's batcher writes at most 512; the rest is headroom for
 * other workers, and the bound keeps one message from carrying unbounded work.
 */
export const MAX_FRAMES_PER_BATCH = 4096;
/** Capabilities per action: the builtin ones are a handful (`Cancel`, the agent controls). */
export const MAX_CAPABILITIES = 16;
/** A failure code or capability: a short machine word (`start_to_close_timeout`). */
export const MAX_CODE_BYTES = 256;
/** A worker kind word (`module`, `agent`). */
export const MAX_KIND_BYTES = 64;
/** `SKEIN_DEPLOYMENT` (`name@revision`). */
export const MAX_DEPLOYMENT_BYTES = 1024;
/** An instance or session id: a UUID, with room for other workers' own forms. */
export const MAX_ID_BYTES = 128;
/** Actions one worker declares. */
export const MAX_ACTIONS = 4096;
/**
 * Attempts a hello may list per handler slot: the ones running (at most `concurrency`) and
 * results not yet acknowledged. The runtime lists at most this many (running ones first).
 */
export const HELD_PER_SLOT = 4;
/** A failure's message; the runtime cuts longer ones (a stderr tail is 4 KiB). */
export const MAX_FAILURE_MESSAGE_BYTES = 65_536;
/**
 * Strings, sub-messages and repeated items one worker message may hold. The largest valid
 * hello (4096 actions with 16 capabilities each, 16384 held attempts) has about 103,000.
 */
export const MAX_BATCH_ITEMS = 131_072;

const name = string({ minBytes: 1, maxBytes: MAX_NAME_BYTES, noControl: true });
const label = (maxBytes: number) => string({ maxBytes, noControl: true });

export const attemptRefDecoder = object({
  run_id: refine(string(), (s) => (isUuid(s) ? undefined : "must be a UUID"), { kind: "shape" }),
  activity_id: u32(),
  attempt: u32({ min: 1 }),
});

export const helloDecoder = object(
  {
    name,
    kind: string({ minBytes: 1, maxBytes: MAX_KIND_BYTES, noControl: true }),
    namespace: namespaceName(),
    task_queue: name,
    concurrency: u32({ min: 1, max: MAX_CONCURRENCY }),
    deployment: label(MAX_DEPLOYMENT_BYTES),
    actions: array(
      object({
        action: name,
        capabilities: array(string({ minBytes: 1, maxBytes: MAX_CODE_BYTES, noControl: true }), {
          max: MAX_CAPABILITIES,
        }),
      }),
      { min: 1, max: MAX_ACTIONS },
    ),
    instance_id: label(MAX_ID_BYTES),
    running: array(object({ ref: attemptRefDecoder, action: name }), {
      max: MAX_CONCURRENCY * HELD_PER_SLOT,
    }),
  },
  {
    check: (hello, path) => {
      const most = hello.concurrency * HELD_PER_SLOT;
      if (hello.running.length > most) {
        refuse(
          "rule",
          { parent: path, key: "running" },
          `must list at most ${HELD_PER_SLOT} × concurrency (${most}) attempts, found ${hello.running.length}`,
        );
      }
    },
  },
);

export type DecodedHello = Decoded<typeof helloDecoder>;

/** Gives every refusal raised inside `inner` the code `code` (a namespace's own code too). */
function restamp<T>(inner: Decoder<T>, code: string): Decoder<T> {
  return {
    expected: inner.expected,
    run(value, path) {
      try {
        return inner.run(value, path);
      } catch (error) {
        throw error instanceof DecodeError ? error.withCode(code) : error;
      }
    },
  };
}

/** The refusal code of a bad hello (the worker prints it); other bad frames: `invalid_frame`. */
export const INVALID_HELLO = "invalid_hello";

const workerFrameDecoder: Decoder<WorkerFrame> = tagged("frame", {
  hello: { hello: restamp(helloDecoder, INVALID_HELLO) },
  heartbeat: { heartbeat: object({ ref: attemptRefDecoder, details_json: string() }) },
  completion: { completion: object({ ref: attemptRefDecoder, output_json: string() }) },
  failure: {
    failure: object({
      ref: attemptRefDecoder,
      code: label(MAX_CODE_BYTES),
      message: string({ maxBytes: MAX_FAILURE_MESSAGE_BYTES }),
      non_retryable: boolean(),
    }),
  },
});

export const workerBatchDecoder = object({
  frames: array(workerFrameDecoder, { max: MAX_FRAMES_PER_BATCH }),
});

/** What the server sends: decoded by the worker runtime, so a bad server cannot crash it. */
const serverFrameDecoder: Decoder<ServerFrame> = tagged("frame", {
  welcome: {
    welcome: object({
      session_id: string({ maxBytes: MAX_ID_BYTES }),
      agent_port: u32({ max: 65_535 }),
    }),
  },
  task: {
    task: object({
      ref: attemptRefDecoder,
      namespace: string(),
      workflow_id: string(),
      action: string(),
      input_json: string(),
      // uint64 on the wire, read as a JS number by proto-loader.
      start_to_close_ms: integer("u64", { max: Number.MAX_SAFE_INTEGER }),
      heartbeat_ms: integer("u64", { max: Number.MAX_SAFE_INTEGER }),
    }),
  },
  cancel: { cancel: object({ ref: attemptRefDecoder, reason: string() }) },
  ack: { ack: object({ ref: attemptRefDecoder }) },
});

export const serverBatchDecoder = object({ frames: array(serverFrameDecoder) });

/**
 * The message fields `scanWorkerBatch` descends into, by field number: the ones whose
 * messages hold repeated fields. Every length-delimited field of a message visited counts
 * as one item (a string, a sub-message, one element of a repeated field).
 */
interface WireSchema {
  readonly [field: number]: WireSchema;
}
/** A message visited for its items, not descended further (ActionCapabilities, HeldAttempt). */
const COUNTED: WireSchema = {};
const HELLO: WireSchema = { 7: COUNTED, 9: COUNTED };
const BATCH: WireSchema = { 1: { 1: HELLO } };

/** Counts the items of a WorkerBatch's wire bytes; a reason when it is malformed or too big. */
export function scanWorkerBatch(bytes: Uint8Array): string | undefined {
  const budget = { left: MAX_BATCH_ITEMS };
  try {
    scan(bytes, 0, bytes.length, BATCH, budget);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  return undefined;
}

function scan(b: Uint8Array, start: number, end: number, schema: WireSchema, budget: Budget) {
  let at = start;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; shift < 64; shift += 7) {
      if (at >= end) throw new Error("not a valid WorkerBatch: truncated varint");
      const byte = b[at++]!;
      if (shift < 28) value |= (byte & 0x7f) << shift;
      else value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    throw new Error("not a valid WorkerBatch: varint too long");
  };
  while (at < end) {
    const key = varint();
    const field = Math.floor(key / 8);
    switch (key % 8) {
      case 0:
        varint();
        break;
      case 1:
        at += 8;
        break;
      case 5:
        at += 4;
        break;
      case 2: {
        const length = varint();
        if (length > end - at) throw new Error("not a valid WorkerBatch: truncated field");
        if (--budget.left < 0) {
          throw new Error(`holds more than ${MAX_BATCH_ITEMS} items (the bound)`);
        }
        const inner = schema[field];
        if (inner !== undefined) scan(b, at, at + length, inner, budget);
        at += length;
        break;
      }
      default:
        throw new Error(`not a valid WorkerBatch: wire type ${key % 8}`);
    }
    if (at > end) throw new Error("not a valid WorkerBatch: truncated field");
  }
}

interface Budget {
  left: number;
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes, on a character boundary. */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  const cut = Buffer.from(text, "utf8").subarray(0, maxBytes).toString("utf8");
  // A character split by the cut decodes as U+FFFD (3 bytes): drop it.
  return cut.endsWith("\uFFFD") ? cut.slice(0, -1) : cut;
}
