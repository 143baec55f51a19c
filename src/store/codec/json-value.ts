/**
 * Record values as stored: JSON text, one canonical text per value, so a tree's hashes and
 * diffs see one integer as one value whatever MessagePack width it arrived in. Integers
 * are exact: up to 2^53 in magnitude they are JavaScript numbers, beyond it bigints (the
 * boundary msgpackr's `int64AsType: "auto"` uses on the socket), written as their decimal
 * digits (`JSON.rawJSON`) and read back as bigints from the source text. A JavaScript
 * number beyond 2^53 is a double, not an exact integer: it is written in exponent form,
 * so it is read back as the same double (plain digits would be read as an integer that
 * may differ from it, as JSON.stringify prints the shortest digits, not the exact value).
 * Bigints must fit MessagePack's 64-bit integers, the widest a value can come back in.
 * (A leaf item may also be raw bytes, which only the store itself writes: `decodeItem`.)
 */

import { storeError } from "../errors.ts";
import type { Item } from "../tree/node.ts";

/** Integers of at most this magnitude are exact JavaScript numbers (2^53). */
export const EXACT_NUMBER_MAX = 2 ** 53;
/**
 * The integers a value may hold: MessagePack's, int 64 up from -2^63 and uint 64 below
 * 2^64, the widest any client can send or read back.
 */
export const INT64_MIN = -(2n ** 63n);
export const UINT64_END = 2n ** 64n;
/** Integer literals beyond 2^53 have at least 16 digits; texts without such a run parse plainly. */
const LONG_RUN = 16;
const INTEGER_LITERAL = /^-?\d+$/;

type RawJson = unknown;
const json = JSON as typeof JSON & { rawJSON(text: string): RawJson };

/** The stored text of a value. */
export function encodeValue(value: unknown): string {
  return needsRaw(value) ? JSON.stringify(value, raw) : JSON.stringify(value);
}

/** A value from its stored text. */
export function decodeValue(text: string): unknown {
  return hasLongDigitRun(text) ? JSON.parse(text, exact as never) : JSON.parse(text);
}

/**
 * A value from its stored item. Raw bytes (written only by the store's own writers: the
 * embedding walk's vectors, in collections no client verb can name) are answered as they
 * are, a Uint8Array: no JSON text stands for them, and nothing is lost or guessed.
 */
export function decodeItem(item: Item): unknown {
  return typeof item === "string" ? decodeValue(item) : item;
}

/**
 * True when `text` holds LONG_RUN digits in a row. Every such run covers one index that is
 * LONG_RUN - 1 modulo LONG_RUN, so only those characters are looked at until one is a digit
 * (a get's value is read through once by JSON.parse already; a regular expression scanning
 * every character cost a third of that again).
 */
function hasLongDigitRun(text: string): boolean {
  const length = text.length;
  for (let at = LONG_RUN - 1; at < length; at += LONG_RUN) {
    if (!isDigit(text.charCodeAt(at))) continue;
    let start = at;
    while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
    let end = at + 1;
    while (end < length && end - start < LONG_RUN && isDigit(text.charCodeAt(end))) end++;
    if (end - start >= LONG_RUN) return true;
  }
  return false;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** True when the value holds a bigint or a double beyond 2^53 (the rare, slower path). */
function needsRaw(value: unknown): boolean {
  if (typeof value === "bigint") return true;
  if (typeof value === "number")
    return Math.abs(value) > EXACT_NUMBER_MAX && Number.isFinite(value);
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return value.some(needsRaw);
  for (const key in value) if (needsRaw((value as Record<string, unknown>)[key])) return true;
  return false;
}

function raw(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") {
    if (value < INT64_MIN || value >= UINT64_END) {
      throw storeError("invalid_request", "an integer value is outside the 64-bit range");
    }
    return json.rawJSON(value.toString());
  }
  if (typeof value === "number" && Math.abs(value) > EXACT_NUMBER_MAX && Number.isFinite(value)) {
    return json.rawJSON(value.toExponential());
  }
  return value;
}

function exact(_key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value !== "number" || Math.abs(value) < EXACT_NUMBER_MAX) return value;
  const source = context?.source;
  if (source === undefined || !INTEGER_LITERAL.test(source)) return value;
  const integer = BigInt(source);
  const magnitude = integer < 0n ? -integer : integer;
  return magnitude <= BigInt(EXACT_NUMBER_MAX) ? value : integer;
}
