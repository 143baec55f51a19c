/**
 * The worker stream's protobuf wire codec, written by hand for `proto/worker.proto` so that
 * neither end builds protobufjs message objects on the hot path: a batch of frames is encoded
 * straight from the tagged unions of frames.ts into one buffer (sizes first, then bytes), and
 * a received batch is read straight from its bytes into those unions. The .proto stays the
 * contract: the output is standard proto3 (defaults omitted, fields in number order) and
 * anything a standard peer may send is read (fields in any order, unknown fields skipped).
 *
 * Reading has two paths with one set of rules. The wire reader here takes the frames a
 * running session sends all the time (completions, heartbeats, failures; tasks, acks,
 * cancels) and accepts one only when every rule of decode.ts holds for it, checked on the
 * bytes (a UUID run id, an attempt from 1, a u32 that fits, a bounded code). Anything else
 * (a hello, a welcome, a value a rule refuses, an unusual but valid shape such as a repeated
 * oneof member) is handed whole to the schema path: proto-loader's decoding and the object
 * decoders of decode.ts, which name the refusal (`frames[0].completion.ref.attempt: must
 * be ...`) or accept what the reader was unsure of. What no peer may send (a field with the
 * wrong wire type, a truncated field, a bad wire type) the reader refuses itself, in the
 * bytes it reads before it is unsure (past that point protobufjs reads the message, and it
 * does not check a known field's wire type). So every
 * frame is decoded into a typed value with its bounds checked, whichever path read it, and
 * nothing a peer sends can crash the process: a fault inside either path is a refusal.
 */

import * as grpc from "@grpc/grpc-js";
import { decode } from "../../common/decode/index.ts";
import {
  INVALID_HELLO,
  isUuid,
  MAX_CODE_BYTES,
  MAX_FAILURE_MESSAGE_BYTES,
  MAX_FRAMES_PER_BATCH,
  scanWorkerBatch,
  serverBatchDecoder,
  workerBatchDecoder,
} from "./decode.ts";
import type { ServerFrame, Task, WorkerFrame } from "./frames.ts";
import { workerService } from "./grpc.ts";

/**
 * Node's Buffer has had these since its first versions (protobufjs and grpc-js use them);
 * they skip `toString`'s and `write`'s encoding switch. Not in @types/node.
 */
interface Utf8Buffer extends Buffer {
  utf8Slice(start: number, end: number): string;
  utf8Write(text: string, offset: number, length: number): number;
}

// ---------------------------------------------------------------------------------------
// Encoding

/**
 * Byte lengths and message sizes computed by the sizing pass, in the order the writing pass
 * needs them; reused across calls (encoding is synchronous).
 */
const sizes: number[] = [];
let next = 0;

function varintSize(n: number): number {
  if (n < 0x80) return 1;
  if (n < 0x4000) return 2;
  if (n < 0x200000) return 3;
  if (n < 0x10000000) return 4;
  let size = 5;
  for (let v = Math.floor(n / 0x800000000); v > 0; v = Math.floor(v / 0x80)) size++;
  return size;
}

/** A string field's size on the wire (0 when empty: proto3 omits defaults); records its length. */
function sizeString(s: string): number {
  if (s.length === 0) return 0;
  const n = Buffer.byteLength(s, "utf8");
  sizes.push(n);
  return 1 + varintSize(n) + n;
}

/** A u32/u64 field's size (0 when zero). */
function sizeVarint(n: number): number {
  return n === 0 ? 0 : 1 + varintSize(n);
}

/** A message field's size, given a slot reserved before its body was sized. */
function closeMessage(slot: number, body: number): number {
  sizes[slot] = body;
  return 1 + varintSize(body) + body;
}

function reserve(): number {
  sizes.push(0);
  return sizes.length - 1;
}

class Out {
  readonly buf: Utf8Buffer;
  pos = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size) as Utf8Buffer;
  }

  varint(n: number): void {
    const buf = this.buf;
    while (n >= 0x80) {
      buf[this.pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    buf[this.pos++] = n;
  }

  string(tag: number, s: string): void {
    if (s.length === 0) return;
    const n = sizes[next++]!;
    this.buf[this.pos++] = tag;
    this.varint(n);
    if (n === s.length && n < 64) {
      // Short ASCII (ids, names): a loop is cheaper than a call into the runtime.
      for (let i = 0; i < n; i++) this.buf[this.pos + i] = s.charCodeAt(i);
    } else {
      this.buf.utf8Write(s, this.pos, n);
    }
    this.pos += n;
  }

  number(tag: number, n: number): void {
    if (n === 0) return;
    this.buf[this.pos++] = tag;
    this.varint(n);
  }

  /** Opens a message field whose size the sizing pass recorded. */
  message(tag: number): void {
    this.buf[this.pos++] = tag;
    this.varint(sizes[next++]!);
  }
}

// Tags: (field number << 3) | wire type (0 varint, 2 length-delimited).
const T1 = 0x0a;
const T2 = 0x12;
const T3 = 0x1a;
const T4 = 0x22;
const T5 = 0x2a;
const T6 = 0x32;
const T7 = 0x3a;
const T8 = 0x42;
const T9 = 0x4a;
const V2 = 0x10;
const V3 = 0x18;
const V4 = 0x20;
const V5 = 0x28;
const V6 = 0x30;
const V7 = 0x38;

interface Ref {
  readonly run_id: string;
  readonly activity_id: number;
  readonly attempt: number;
}

function sizeRef(ref: Ref): number {
  const slot = reserve();
  return closeMessage(
    slot,
    sizeString(ref.run_id) + sizeVarint(ref.activity_id) + sizeVarint(ref.attempt),
  );
}

function writeRef(out: Out, ref: Ref): void {
  out.message(T1);
  out.string(T1, ref.run_id);
  out.number(V2, ref.activity_id);
  out.number(V3, ref.attempt);
}

function sizeTask(t: Task): number {
  return (
    sizeRef(t.ref) +
    sizeString(t.namespace) +
    sizeString(t.workflow_id) +
    sizeString(t.action) +
    sizeString(t.input_json) +
    sizeVarint(t.start_to_close_ms) +
    sizeVarint(t.heartbeat_ms)
  );
}

function sizeServerFrame(f: ServerFrame): number {
  const slot = reserve();
  switch (f.frame) {
    case "welcome":
      return closeMessage(
        slot,
        sizeString(f.welcome.session_id) + sizeVarint(f.welcome.agent_port),
      );
    case "task":
      return closeMessage(slot, sizeTask(f.task));
    case "cancel":
      return closeMessage(slot, sizeRef(f.cancel.ref) + sizeString(f.cancel.reason));
    case "ack":
      return closeMessage(slot, sizeRef(f.ack.ref));
  }
}

function writeServerFrame(out: Out, f: ServerFrame): void {
  switch (f.frame) {
    case "welcome":
      out.message(T1);
      out.string(T1, f.welcome.session_id);
      out.number(V2, f.welcome.agent_port);
      return;
    case "task": {
      const t = f.task;
      out.message(T2);
      writeRef(out, t.ref);
      out.string(T2, t.namespace);
      out.string(T3, t.workflow_id);
      out.string(T4, t.action);
      out.string(T5, t.input_json);
      out.number(V6, t.start_to_close_ms);
      out.number(V7, t.heartbeat_ms);
      return;
    }
    case "cancel":
      out.message(T3);
      writeRef(out, f.cancel.ref);
      out.string(T2, f.cancel.reason);
      return;
    case "ack":
      out.message(T4);
      writeRef(out, f.ack.ref);
      return;
  }
}

function sizeWorkerFrame(f: WorkerFrame): number {
  const slot = reserve();
  switch (f.frame) {
    case "hello": {
      const h = f.hello;
      let body =
        sizeString(h.name) +
        sizeString(h.kind) +
        sizeString(h.namespace) +
        sizeString(h.task_queue) +
        sizeVarint(h.concurrency) +
        sizeString(h.deployment);
      for (const a of h.actions) {
        const s = reserve();
        let inner = sizeString(a.action);
        for (const c of a.capabilities) inner += c.length === 0 ? 2 : sizeString(c);
        body += closeMessage(s, inner);
      }
      body += sizeString(h.instance_id);
      for (const held of h.running) {
        const s = reserve();
        body += closeMessage(s, sizeRef(held.ref) + sizeString(held.action));
      }
      return closeMessage(slot, body);
    }
    case "heartbeat":
      return closeMessage(slot, sizeRef(f.heartbeat.ref) + sizeString(f.heartbeat.details_json));
    case "completion":
      return closeMessage(slot, sizeRef(f.completion.ref) + sizeString(f.completion.output_json));
    case "failure":
      return closeMessage(
        slot,
        sizeRef(f.failure.ref) +
          sizeString(f.failure.code) +
          sizeString(f.failure.message) +
          sizeVarint(f.failure.non_retryable ? 1 : 0),
      );
  }
}

function writeWorkerFrame(out: Out, f: WorkerFrame): void {
  switch (f.frame) {
    case "hello": {
      const h = f.hello;
      out.message(T1);
      out.string(T1, h.name);
      out.string(T2, h.kind);
      out.string(T3, h.namespace);
      out.string(T4, h.task_queue);
      out.number(V5, h.concurrency);
      out.string(T6, h.deployment);
      for (const a of h.actions) {
        out.message(T7);
        out.string(T1, a.action);
        for (const c of a.capabilities) {
          // A repeated string keeps its empty elements (their position is their meaning).
          if (c.length === 0) {
            out.buf[out.pos++] = T2;
            out.buf[out.pos++] = 0;
          } else out.string(T2, c);
        }
      }
      out.string(T8, h.instance_id);
      for (const held of h.running) {
        out.message(T9);
        writeRef(out, held.ref);
        out.string(T2, held.action);
      }
      return;
    }
    case "heartbeat":
      out.message(T2);
      writeRef(out, f.heartbeat.ref);
      out.string(T2, f.heartbeat.details_json);
      return;
    case "completion":
      out.message(T3);
      writeRef(out, f.completion.ref);
      out.string(T2, f.completion.output_json);
      return;
    case "failure":
      out.message(T4);
      writeRef(out, f.failure.ref);
      out.string(T2, f.failure.code);
      out.string(T3, f.failure.message);
      out.number(V4, f.failure.non_retryable ? 1 : 0);
      return;
  }
}

function encodeBatch<F>(
  frames: readonly F[],
  size: (f: F) => number,
  write: (out: Out, f: F) => void,
): Buffer {
  sizes.length = 0;
  let total = 0;
  // Each frame is a message of the batch's field 1 whose one field is the frame's member.
  // Indexed loops: a `for…of` costs an iterator result per frame where V8 does not inline it.
  for (let i = 0; i < frames.length; i++) {
    const slot = reserve();
    total += closeMessage(slot, size(frames[i]!));
  }
  const out = new Out(total);
  next = 0;
  for (let i = 0; i < frames.length; i++) {
    out.message(T1);
    write(out, frames[i]!);
  }
  // The sizing and the writing pass must agree; a mismatch is this module's bug, never a
  // peer's doing (the frames are the process's own), so it fails loudly.
  if (out.pos !== total) throw new Error(`worker stream codec: wrote ${out.pos} of ${total} bytes`);
  return out.buf;
}

/** A ServerBatch's protobuf bytes (the server's side of the stream). */
export function encodeServerBatch(frames: readonly ServerFrame[]): Buffer {
  return encodeBatch(frames, sizeServerFrame, writeServerFrame);
}

/** A WorkerBatch's protobuf bytes (the worker's side of the stream). */
export function encodeWorkerBatch(frames: readonly WorkerFrame[]): Buffer {
  return encodeBatch(frames, sizeWorkerFrame, writeWorkerFrame);
}

// ---------------------------------------------------------------------------------------
// Reading

/** What no peer may send: the batch is refused with this reason. */
class WireRefusal {
  readonly reason: string;
  constructor(reason: string) {
    this.reason = reason;
  }
}

/** The wire reader cannot take this frame: the schema path decides. */
const UNSURE = undefined;

class In {
  readonly buf: Utf8Buffer;
  pos: number;
  readonly #name: string;
  constructor(buf: Buffer, name: string) {
    this.buf = buf as Utf8Buffer;
    this.pos = 0;
    this.#name = name;
  }

  refuse(what: string): never {
    throw new WireRefusal(`not a valid ${this.#name}: ${what}`);
  }

  /** A varint as a JS number (exact up to 2^53; larger ones only compare as too large). */
  varint(end: number): number {
    const buf = this.buf;
    let value = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (this.pos >= end) this.refuse("truncated varint");
      const byte = buf[this.pos++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    return this.refuse("varint too long");
  }

  /** A field's key: its number (from 1) and wire type, as a u32. */
  key(end: number): number {
    const key = this.varint(end);
    if (key > U32_MAX || key < 8) this.refuse(`field key ${key}`);
    return key;
  }

  /** A length-delimited field's length, checked against `end`. */
  length(end: number): number {
    const n = this.varint(end);
    if (n > end - this.pos) this.refuse("truncated field");
    return n;
  }

  string(end: number): string {
    const n = this.length(end);
    const s = this.buf.utf8Slice(this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  /** Skips an unknown field; groups (proto2) are left to the schema path. */
  skip(wireType: number, end: number): boolean {
    switch (wireType) {
      case 0:
        this.varint(end);
        return true;
      case 1:
        if (end - this.pos < 8) this.refuse("truncated field");
        this.pos += 8;
        return true;
      case 2: {
        // Not `this.pos += this.length(end)`: that would add to the position before the length.
        const n = this.length(end);
        this.pos += n;
        return true;
      }
      case 5:
        if (end - this.pos < 4) this.refuse("truncated field");
        this.pos += 4;
        return true;
      case 3:
      case 4:
        return false;
      default:
        return this.refuse(`wire type ${wireType}`);
    }
  }

  /** A known string field's value. */
  text(key: number, end: number): string {
    this.expect(key, 2);
    return this.string(end);
  }

  /** A known u32/u64 field's value. */
  number(key: number, end: number): number {
    this.expect(key, 0);
    return this.varint(end);
  }

  /** A known field must come with its own wire type. */
  expect(key: number, wireType: number): void {
    if ((key & 7) !== wireType) {
      this.refuse(`field ${Math.floor(key / 8)} has wire type ${key & 7}, expected ${wireType}`);
    }
  }
}

const U32_MAX = 0xffff_ffff;

/** An AttemptRef whose rules hold, or UNSURE. */
function readRef(r: In, end: number): Ref | undefined {
  let runId = "";
  let activityId = 0;
  let attempt = 0;
  while (r.pos < end) {
    const key = r.key(end);
    switch (key >>> 3) {
      case 1:
        runId = r.text(key, end);
        break;
      case 2:
        activityId = r.number(key, end);
        break;
      case 3:
        attempt = r.number(key, end);
        break;
      default:
        if (!r.skip(key & 7, end)) return UNSURE;
    }
  }
  if (!isUuid(runId) || activityId > U32_MAX || attempt < 1 || attempt > U32_MAX) return UNSURE;
  return { run_id: runId, activity_id: activityId, attempt };
}

/**
 * A frame's ref (field 1), read once: `seen` is the one read before, null when none. A second
 * ref merges into the first in protobuf, rare enough to leave to the schema path (UNSURE).
 */
function refField(r: In, key: number, end: number, seen: Ref | null): Ref | undefined {
  r.expect(key, 2);
  const n = r.length(end);
  return seen === null ? readRef(r, r.pos + n) : UNSURE;
}

/** A code the rules accept for sure: printable ASCII, within MAX_CODE_BYTES. */
function isPlainCode(s: string): boolean {
  if (s.length > MAX_CODE_BYTES) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/**
 * One result frame's body (Heartbeat, Completion, Failure share the ref as field 1 and a
 * string as field 2; Failure adds field 3, a string, and field 4, a bool), or UNSURE.
 */
function readResult(r: In, end: number, kind: 2 | 3 | 4): WorkerFrame | undefined {
  let ref: Ref | null | undefined = null;
  let text = "";
  let message = "";
  let nonRetryable = false;
  while (r.pos < end) {
    const key = r.key(end);
    const field = key >>> 3;
    if (field === 1) {
      ref = refField(r, key, end, ref);
      if (ref === UNSURE) return UNSURE;
    } else if (field === 2) {
      text = r.text(key, end);
    } else if (kind === 4 && field === 3) {
      r.expect(key, 2);
      const n = r.length(end);
      if (n > MAX_FAILURE_MESSAGE_BYTES) return UNSURE;
      message = r.buf.utf8Slice(r.pos, r.pos + n);
      r.pos += n;
    } else if (kind === 4 && field === 4) {
      nonRetryable = r.number(key, end) !== 0;
    } else if (!r.skip(key & 7, end)) return UNSURE;
  }
  if (ref === null || ref === undefined) return UNSURE;
  switch (kind) {
    case 2:
      return { frame: "heartbeat", heartbeat: { ref, details_json: text } };
    case 3:
      return { frame: "completion", completion: { ref, output_json: text } };
    case 4:
      if (!isPlainCode(text)) return UNSURE;
      return {
        frame: "failure",
        failure: { ref, code: text, message, non_retryable: nonRetryable },
      };
  }
}

/** A WorkerFrame the wire reader takes (not a hello), or UNSURE. */
function readWorkerFrame(r: In, end: number): WorkerFrame | undefined {
  let frame: WorkerFrame | undefined;
  while (r.pos < end) {
    const key = r.key(end);
    const field = key >>> 3;
    if (field >= 2 && field <= 4) {
      r.expect(key, 2);
      const n = r.length(end);
      // One oneof member per frame; a second one (the last wins in protobuf) is unusual.
      if (frame !== undefined) return UNSURE;
      frame = readResult(r, r.pos + n, field as 2 | 3 | 4);
      if (frame === UNSURE) return UNSURE;
    } else if (field === 1) {
      r.expect(key, 2);
      return UNSURE;
    } else if (!r.skip(key & 7, end)) return UNSURE;
  }
  return frame;
}

function readTask(r: In, end: number): ServerFrame | undefined {
  let ref: Ref | null | undefined = null;
  let namespace = "";
  let workflowId = "";
  let action = "";
  let input = "";
  let startToClose = 0;
  let heartbeat = 0;
  while (r.pos < end) {
    const key = r.key(end);
    switch (key >>> 3) {
      case 1: {
        ref = refField(r, key, end, ref);
        if (ref === UNSURE) return UNSURE;
        break;
      }
      case 2:
        namespace = r.text(key, end);
        break;
      case 3:
        workflowId = r.text(key, end);
        break;
      case 4:
        action = r.text(key, end);
        break;
      case 5:
        input = r.text(key, end);
        break;
      case 6:
        startToClose = r.number(key, end);
        break;
      case 7:
        heartbeat = r.number(key, end);
        break;
      default:
        if (!r.skip(key & 7, end)) return UNSURE;
    }
  }
  if (ref === null || ref === undefined) return UNSURE;
  if (startToClose > Number.MAX_SAFE_INTEGER || heartbeat > Number.MAX_SAFE_INTEGER) return UNSURE;
  return {
    frame: "task",
    task: {
      ref,
      namespace,
      workflow_id: workflowId,
      action,
      input_json: input,
      start_to_close_ms: startToClose,
      heartbeat_ms: heartbeat,
    },
  };
}

/** An Ack's or CancelActivity's body (ref, and the cancel's reason), or UNSURE. */
function readRefFrame(r: In, end: number, kind: 3 | 4): ServerFrame | undefined {
  let ref: Ref | null | undefined = null;
  let reason = "";
  while (r.pos < end) {
    const key = r.key(end);
    const field = key >>> 3;
    if (field === 1) {
      ref = refField(r, key, end, ref);
      if (ref === UNSURE) return UNSURE;
    } else if (kind === 3 && field === 2) {
      reason = r.text(key, end);
    } else if (!r.skip(key & 7, end)) return UNSURE;
  }
  if (ref === null || ref === undefined) return UNSURE;
  return kind === 3 ? { frame: "cancel", cancel: { ref, reason } } : { frame: "ack", ack: { ref } };
}

/** A ServerFrame the wire reader takes (not a welcome), or UNSURE. */
function readServerFrame(r: In, end: number): ServerFrame | undefined {
  let frame: ServerFrame | undefined;
  while (r.pos < end) {
    const key = r.key(end);
    const field = key >>> 3;
    if (field >= 1 && field <= 4) {
      r.expect(key, 2);
      const n = r.length(end);
      if (frame !== undefined || field === 1) return UNSURE;
      const inner = r.pos + n;
      frame = field === 2 ? readTask(r, inner) : readRefFrame(r, inner, field as 3 | 4);
      if (frame === UNSURE) return UNSURE;
    } else if (!r.skip(key & 7, end)) return UNSURE;
  }
  return frame;
}

/** A batch's frames by the wire reader, or UNSURE; throws a WireRefusal. */
function readBatch<F>(
  r: In,
  readFrame: (r: In, end: number) => F | undefined,
  max: number,
): F[] | undefined {
  const end = r.buf.length;
  const frames: F[] = [];
  while (r.pos < end) {
    const key = r.key(end);
    if (key >>> 3 === 1) {
      r.expect(key, 2);
      const n = r.length(end);
      if (frames.length === max) return UNSURE;
      const frameEnd = r.pos + n;
      const frame = readFrame(r, frameEnd);
      if (frame === UNSURE) return UNSURE;
      r.pos = frameEnd;
      frames.push(frame);
    } else if (!r.skip(key & 7, end)) return UNSURE;
  }
  return frames;
}

/** A worker message the server refuses: the stream ends with `code: message`. */
export class BatchRefusal {
  readonly code: "invalid_frame" | "invalid_hello";
  readonly message: string;
  constructor(code: "invalid_frame" | "invalid_hello", message: string) {
    this.code = code;
    this.message = message;
  }
}

type Method = grpc.MethodDefinition<unknown, unknown>;
const reference = workerService.Connect as Method;

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A worker message's frames, each decoded and checked, or the refusal that ends its stream:
 * the wire reader for the frames it takes, the schema path (scan, proto-loader, decode.ts)
 * for everything else.
 */
export function decodeWorkerBatch(bytes: Buffer): WorkerFrame[] | BatchRefusal {
  try {
    const frames = readBatch(new In(bytes, "WorkerBatch"), readWorkerFrame, MAX_FRAMES_PER_BATCH);
    if (frames !== UNSURE) return frames;
  } catch (error) {
    if (error instanceof WireRefusal) return new BatchRefusal("invalid_frame", error.reason);
    return new BatchRefusal("invalid_frame", `not a valid WorkerBatch: ${reason(error)}`);
  }
  const problem = scanWorkerBatch(bytes);
  if (problem !== undefined) return new BatchRefusal("invalid_frame", problem);
  try {
    const decoded = decode(workerBatchDecoder, reference.requestDeserialize(bytes));
    if (decoded.ok) return decoded.value.frames;
    const code = decoded.error.code === INVALID_HELLO ? "invalid_hello" : "invalid_frame";
    return new BatchRefusal(code, decoded.error.message);
  } catch (error) {
    return new BatchRefusal("invalid_frame", `not a valid WorkerBatch: ${reason(error)}`);
  }
}

/**
 * A server message's frames, each decoded and checked, or the reason the worker cannot
 * follow it (a string): the same two paths as `decodeWorkerBatch`.
 */
export function decodeServerBatch(bytes: Buffer): ServerFrame[] | string {
  try {
    const frames = readBatch(
      new In(bytes, "ServerBatch"),
      readServerFrame,
      Number.MAX_SAFE_INTEGER,
    );
    if (frames !== UNSURE) return frames;
  } catch (error) {
    return error instanceof WireRefusal
      ? error.reason
      : `not a valid ServerBatch: ${reason(error)}`;
  }
  try {
    const decoded = decode(serverBatchDecoder, reference.responseDeserialize(bytes));
    return decoded.ok ? decoded.value.frames : decoded.error.message;
  } catch (error) {
    return `not a valid ServerBatch: ${reason(error)}`;
  }
}

/** What the server's handler receives for each worker message. */
export type ReceivedWorkerBatch = WorkerFrame[] | BatchRefusal;
/** What the worker runtime receives for each server message: frames, or why not. */
export type ReceivedServerBatch = ServerFrame[] | string;

const connectMethod = {
  path: reference.path,
  requestStream: true,
  responseStream: true,
  originalName: reference.originalName,
  requestSerialize: encodeWorkerBatch,
  requestDeserialize: decodeWorkerBatch,
  responseSerialize: encodeServerBatch,
  responseDeserialize: decodeServerBatch,
} as const;

/**
 * `WorkerService` with this codec: the server registers its handler against it (it writes
 * `ServerFrame[]` and receives `ReceivedWorkerBatch`), and `WorkerStreamClient` dials it (it
 * writes `WorkerFrame[]` and receives `ReceivedServerBatch`).
 */
export const codecWorkerService = {
  Connect: connectMethod,
} as unknown as grpc.ServiceDefinition;

/** The client constructor the worker runtime connects with. */
export const WorkerStreamClient = grpc.makeGenericClientConstructor(
  codecWorkerService,
  "WorkerService",
);

export type CodecServerStream = grpc.ServerDuplexStream<ReceivedWorkerBatch, ServerFrame[]>;
export type CodecClientStream = grpc.ClientDuplexStream<WorkerFrame[], ReceivedServerBatch>;
