/**
 * Frames on the store socket: a 4-byte big-endian payload length, then a MessagePack
 * payload (integers as wire-integers.ts describes). The reader is the common one
 * (src/common/frame-reader.ts): it reassembles frames incrementally and reports a frame larger
 * than the current limit as soon as its length is known, before buffering it.
 *
 * Keys named `__proto__` come out as own data properties, as JSON.parse gives them:
 * msgpackr renames such a key to `__proto_` (its guard against prototype pollution, with no
 * option to turn it off), which would alter a stored document. A payload whose bytes hold
 * `__proto__` anywhere (a native byte search, once per frame) is decoded again with maps as
 * `Map`s and rebuilt key by key with `Object.defineProperty`, which never touches a prototype;
 * every other payload takes msgpackr's plain object path.
 */

import { Packr, Unpackr } from "msgpackr";
import { toWire } from "./wire-integers.ts";

// 64-bit integers up to 2^53 decode as numbers, larger ones as bigints (exact). msgpackr
// reads "auto" (unpack.js) though its type declarations list only the other modes.
const INT64_AS_TYPE = "auto" as "bigint";

const packr = new Packr({
  useRecords: false,
  mapsAsObjects: true,
  variableMapSize: true,
  int64AsType: INT64_AS_TYPE,
});

/** The same reading as `packr`'s, with every map as a `Map` (the `__proto__` path). */
const mapUnpackr = new Unpackr({
  useRecords: false,
  mapsAsObjects: false,
  int64AsType: INT64_AS_TYPE,
});

/** The key msgpackr renames, as UTF-8 bytes (found within a key of any string width). */
const PROTO_KEY = Buffer.from("__proto__", "latin1");

export { FrameReader } from "../../common/frame-reader.ts";

export const HEADER_BYTES = 4;

export function encodeFrame(message: unknown): Buffer {
  const payload = packr.pack(toWire(message));
  const frame = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  frame.writeUInt32BE(payload.length, 0);
  payload.copy(frame, HEADER_BYTES);
  return frame;
}

export function decodePayload(payload: Buffer): unknown {
  if (payload.indexOf(PROTO_KEY) === -1) return packr.unpack(payload);
  return fromMaps(mapUnpackr.unpack(payload));
}

/** The decoded value with every `Map` made a plain object, keys as msgpackr's object path names them. */
function fromMaps(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = fromMaps(value[i]);
    return value;
  }
  if (!(value instanceof Map)) return value;
  const object: Record<string, unknown> = {};
  for (const [key, item] of value) {
    Object.defineProperty(object, keyName(key), {
      value: fromMaps(item),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return object;
}

/** A map key as a property name: msgpackr's own rule for maps read as objects (asSafeString). */
function keyName(key: unknown): string {
  switch (typeof key) {
    case "string":
      return key;
    case "number":
    case "boolean":
    case "bigint":
      return key.toString();
    default:
      if (key == null) return `${key}`;
      throw new Error(
        `Invalid property type for record: ${typeof key}. A MessagePack map with non-string keys can be decoded as a Map with mapsAsObjects: false`,
      );
  }
}
