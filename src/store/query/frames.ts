/**
 * Frames between the store and a query worker: a 4-byte big-endian payload length, then
 * the payload as UTF-8 JSON text. JSON (not the socket's MessagePack) so a worker in any
 * language can speak it with its standard library; the reader is the common one
 * (src/common/frame-reader.ts). Both the store and the shipped worker use this module.
 *
 * A batch frame has one exact layout (docs/queries.md, "Worker protocol"), which the store
 * always writes and a worker may rely on: `{"type":"batch","id":N,"records":[...]}` with
 * no whitespace outside the records. The store writes it straight from the stored JSON
 * texts, and the shipped worker hands the records' bytes to its sandbox without parsing
 * the message or making a string of them: a batch is the largest thing either side
 * handles, and strings past V8's regular-object size (128 KiB) cost several times more to
 * make than the bytes they hold.
 */

import { FRAME_HEADER_BYTES } from "../../common/frame-reader.ts";

export { FrameReader as JsonFrameReader } from "../../common/frame-reader.ts";

export function encodeJsonFrame(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  frame.writeUInt32BE(length, 0);
  frame.write(text, FRAME_HEADER_BYTES, "utf8");
  return frame;
}

/** A frame whose payload is `head`, then `body` (JSON text as UTF-8 bytes), then `tail`. */
export function encodeSplicedFrame(head: string, body: Uint8Array, tail: string): Buffer {
  const headBytes = Buffer.byteLength(head);
  const length = headBytes + body.length + Buffer.byteLength(tail);
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  frame.writeUInt32BE(length, 0);
  frame.write(head, FRAME_HEADER_BYTES, "utf8");
  frame.set(body, FRAME_HEADER_BYTES + headBytes);
  frame.write(tail, FRAME_HEADER_BYTES + headBytes + body.length, "utf8");
  return frame;
}

const BATCH_HEAD = '{"type":"batch","id":';
const BATCH_RECORDS = ',"records":';
const OPEN = "[";
const CLOSE = "]}";

/**
 * The batch frame for records given as key and value JSON text, in the exact layout,
 * written into one buffer: no string of the whole batch is made.
 */
export function encodeBatchFrame(
  id: number,
  records: readonly (readonly [key: string, json: string])[],
): Buffer {
  // Sized for ASCII text, which stored JSON mostly is (the 24 is a record's punctuation
  // and key quotes); grown only when multi-byte text does not fit.
  let estimate = 64;
  for (let i = 0; i < records.length; i++) {
    estimate += records[i]![0].length + records[i]![1].length + 24;
  }
  const out = { frame: Buffer.allocUnsafe(FRAME_HEADER_BYTES + estimate), at: FRAME_HEADER_BYTES };
  put(out, `${BATCH_HEAD}${id}${BATCH_RECORDS}${OPEN}`);
  for (let i = 0; i < records.length; i++) {
    const [key, json] = records[i]!;
    // The previous record's closing brace goes with this one's head. A key that needs no
    // escaping (most do not) is copied here: no string is made for it, and one native
    // write a record is left, the value's.
    if (plainKey(key)) {
      ensure(out, KEY_NEXT.length + key.length + VALUE_HEAD.length + 2);
      const frame = out.frame;
      let at = copy(frame, out.at, i === 0 ? KEY_FIRST : KEY_NEXT);
      frame[at++] = 0x22;
      for (let c = 0; c < key.length; c++) frame[at++] = key.charCodeAt(c);
      frame[at++] = 0x22;
      out.at = copy(frame, at, VALUE_HEAD);
    } else put(out, `${i === 0 ? "" : "},"}{"key":${JSON.stringify(key)},"value":`);
    put(out, json);
  }
  put(out, records.length === 0 ? CLOSE : `}${CLOSE}`);
  out.frame.writeUInt32BE(out.at - FRAME_HEADER_BYTES, 0);
  return out.frame.subarray(0, out.at);
}

/** Appends `text` as UTF-8, growing the frame when it does not fit. */
function put(out: { frame: Buffer; at: number }, text: string): void {
  // A UTF-16 unit is at most 3 bytes: only near the end is the text measured.
  if (out.at + text.length * 3 > out.frame.length) ensure(out, Buffer.byteLength(text));
  out.at += out.frame.write(text, out.at);
}

/** Grows the frame, when needed, so `bytes` more fit. */
function ensure(out: { frame: Buffer; at: number }, bytes: number): void {
  const needed = out.at + bytes;
  if (needed <= out.frame.length) return;
  const grown = Buffer.allocUnsafe(Math.max(out.frame.length * 2, needed));
  out.frame.copy(grown, 0, 0, out.at);
  out.frame = grown;
}

const KEY_FIRST = Buffer.from('{"key":');
const KEY_NEXT = Buffer.from('},{"key":');
const VALUE_HEAD = Buffer.from(',"value":');

/** A key JSON writes as itself between quotes: printable ASCII, no quote or backslash. */
function plainKey(key: string): boolean {
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** Copies a few constant bytes (a loop: cheaper than a native copy at this size). */
function copy(frame: Buffer, at: number, bytes: Buffer): number {
  let to = at;
  for (let i = 0; i < bytes.length; i++) frame[to++] = bytes[i]!;
  return to;
}

const batchHead = Buffer.from(BATCH_HEAD);
const batchRecords = Buffer.from(BATCH_RECORDS);
/** Digits of the largest message id (a u32). */
const ID_DIGITS = 10;

/**
 * The id and the records' bytes (the JSON array) of a payload in the exact batch layout,
 * without parsing the records; undefined for any other payload (the caller parses it).
 */
export function sliceBatch(payload: Buffer): { id: number; records: Buffer } | undefined {
  if (payload.length < batchHead.length || payload[payload.length - 1] !== 0x7d) return undefined;
  if (payload.compare(batchHead, 0, batchHead.length, 0, batchHead.length) !== 0) return undefined;
  let at = batchHead.length;
  let id = 0;
  while (at < payload.length && payload[at]! >= 0x30 && payload[at]! <= 0x39) {
    id = id * 10 + payload[at]! - 0x30;
    at++;
  }
  const digits = at - batchHead.length;
  if (digits === 0 || digits > ID_DIGITS || id > 0xffff_ffff) return undefined;
  const end = at + batchRecords.length;
  if (payload.compare(batchRecords, 0, batchRecords.length, at, end) !== 0) return undefined;
  if (payload[end] !== 0x5b) return undefined;
  return { id, records: payload.subarray(end, payload.length - 1) };
}
