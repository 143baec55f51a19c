/**
 * How integers cross the store socket. Decoding (msgpackr `int64AsType: "auto"`): every
 * MessagePack integer width is accepted; an integer up to 2^53 in magnitude becomes a
 * number, a larger one a bigint, so nothing is rounded. Encoding: every integer is
 * written as a MessagePack integer in the smallest width that holds it, unsigned types
 * for non-negative values and signed ones for negative values, as for small integers, up
 * to uint 64 (0xcf) and int 64 (0xd3). So a client gets back the bytes it sent for any
 * integer it sent in its smallest width: a millisecond timestamp sent as uint 64 comes
 * back as uint 64, not as the float 64 msgpackr writes for a number above 32 bits, nor
 * as the int 64 it writes for a bigint below 2^63. Non-integral numbers stay float 64.
 *
 * `toWire` rewrites an outgoing message (copying only what changes): numbers above 32
 * bits and non-negative bigints become `Uint64`, written by a msgpackr extension as raw
 * 0xcf bytes; negative ones become bigints, which msgpackr writes as int 64. msgpackr
 * needs an extension type number to register the class; nothing is ever written with it,
 * and reading it is refused as any unknown extension type would be.
 */

import { addExtension } from "msgpackr";
import { EXACT_NUMBER_MAX } from "../codec/json-value.ts";

/** A non-negative integer to write as MessagePack uint 64. */
class Uint64 {
  readonly value: bigint;
  constructor(value: bigint) {
    this.value = value;
  }
}

/** The extension type msgpackr files `Uint64` under (registered, never written). */
const UINT64_REGISTRATION = 0x75;
const UINT32_MAX = 0xffff_ffff;
const INT32_MIN = -0x8000_0000;

// `pack` in the allocateForWrite form, which msgpackr's own Date extension uses to write
// raw bytes in place; msgpackr's type declarations know only the form that returns the
// data of an extension, hence the cast.
addExtension({
  Class: Uint64,
  type: UINT64_REGISTRATION,
  pack(
    value: Uint64,
    allocateForWrite: (size: number) => { target: Buffer; targetView: DataView; position: number },
  ) {
    const { target, targetView, position } = allocateForWrite(9);
    target[position] = 0xcf;
    targetView.setBigUint64(position + 1, value.value);
  },
  unpack() {
    throw new Error(`MessagePack extension type ${UINT64_REGISTRATION} is not accepted`);
  },
} as never);

/** The message with its wide integers in the forms above; the same object when none. */
export function toWire(value: unknown): unknown {
  switch (typeof value) {
    case "number":
      if (!Number.isInteger(value) || Math.abs(value) > EXACT_NUMBER_MAX) return value;
      if (value > UINT32_MAX) return new Uint64(BigInt(value));
      return value < INT32_MIN ? BigInt(value) : value;
    case "bigint":
      return value >= 0n ? new Uint64(value) : value;
    case "object":
      if (value === null || ArrayBuffer.isView(value)) return value;
      return Array.isArray(value) ? arrayToWire(value) : objectToWire(value as object);
    default:
      return value;
  }
}

function arrayToWire(array: readonly unknown[]): unknown {
  let out: unknown[] | undefined;
  for (let i = 0; i < array.length; i++) {
    const item = toWire(array[i]);
    if (item === array[i]) continue;
    out ??= [...array];
    out[i] = item;
  }
  return out ?? array;
}

function objectToWire(object: object): unknown {
  if (Object.getPrototypeOf(object) !== Object.prototype) return object;
  let out: Record<string, unknown> | undefined;
  for (const key in object) {
    const item = (object as Record<string, unknown>)[key];
    const wired = toWire(item);
    if (wired === item) continue;
    out ??= { ...object };
    // defineProperty: an own "__proto__" key (from a decoded map) stays a plain key.
    Object.defineProperty(out, key, {
      value: wired,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out ?? object;
}
