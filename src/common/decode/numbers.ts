/**
 * Numbers without loss. JSON numbers arrive as their source text (lossless-json's
 * LosslessNumber), TOML integers as bigint, so `18446744073709551615` stays exact and `1.0`,
 * `1e3` and `-0` are still recognisable as not-whole. Integer decoders check, in this order:
 * the JSON type, wholeness, sign, the integer type's own bounds (overflow), then the field's
 * bounds (range); each reads differently.
 */

import { arch } from "node:os";
import type { Decoder, JsonSchema } from "./decoder.ts";
import { describeValue, type Path, refuse } from "./refusal.ts";

export const U32_MAX = 4_294_967_295n;
export const U64_MAX = 18_446_744_073_709_551_615n;
/** `usize` is 64 bits on the 64-bit platforms Node ships for; 32 bits elsewhere. */
export const USIZE_MAX = /64/.test(arch()) ? U64_MAX : U32_MAX;

export type IntegerType = "u32" | "u64" | "usize";

const TYPE_MAX: Record<IntegerType, bigint> = { u32: U32_MAX, u64: U64_MAX, usize: USIZE_MAX };

const WHOLE = /^-?(0|[1-9][0-9]*)$/;

/** The text of a number as it appeared in the source, or undefined when it is not a number. */
export function numberText(value: unknown): string | undefined {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") {
    // A JS number reaching a decoder came from code or from a TOML float; only a safe
    // integer keeps its meaning, anything else is reported as written.
    if (Number.isSafeInteger(value) && !Object.is(value, -0)) return String(value);
    return Object.is(value, -0) ? "-0" : Number.isInteger(value) ? `${value}.0` : String(value);
  }
  if (
    typeof value === "object" &&
    value !== null &&
    (value as { isLosslessNumber?: unknown }).isLosslessNumber === true
  ) {
    return (value as { value: string }).value;
  }
  return undefined;
}

export interface IntegerBounds {
  readonly min?: bigint | number;
  readonly max?: bigint | number;
}

function integerCore(type: IntegerType, bounds: IntegerBounds) {
  const typeMax = TYPE_MAX[type];
  const min = BigInt(bounds.min ?? 0);
  const max = BigInt(bounds.max ?? typeMax);
  if (min < 0n || max > typeMax || min > max) {
    throw new RangeError(`bad bounds ${min}..${max} for ${type}`);
  }
  const expected = describeBounds(type, min, max, typeMax);
  const schema = integerSchema(expected, min, max);
  const run = (value: unknown, path: Path): bigint => {
    const text = numberText(value);
    if (text === undefined) {
      if (value === null) refuse("null", path, `null is not accepted; expected ${expected}`);
      refuse("type", path, `expected ${expected}, found ${describeValue(value)}`);
    }
    if (!WHOLE.test(text) || text === "-0") {
      refuse("whole", path, `expected a whole number (${expected}), found ${text}`);
    }
    const n = BigInt(text);
    if (n < 0n) refuse("negative", path, `must not be negative (${expected}), found ${text}`);
    if (n > typeMax)
      refuse("overflow", path, `overflows ${type} (at most ${typeMax}), found ${text}`);
    if (n < min || n > max) refuse("range", path, `must be ${rangeWords(min, max)}, found ${text}`);
    return n;
  };
  return { expected, run, schema };
}

/** An integer's schema; a bound past 2^53 is left out (a JSON Schema number cannot hold it
 * exactly), which only loosens it. */
function integerSchema(expected: string, min: bigint, max: bigint): JsonSchema {
  const exact = (n: bigint) => n <= BigInt(Number.MAX_SAFE_INTEGER);
  return {
    type: "integer",
    description: expected,
    ...(min > 0n ? { minimum: Number(min) } : { minimum: 0 }),
    ...(exact(max) ? { maximum: Number(max) } : {}),
  };
}

function describeBounds(type: IntegerType, min: bigint, max: bigint, typeMax: bigint): string {
  if (min === 0n && max === typeMax) return type;
  if (min === 1n && max === typeMax) return `positive ${type}`;
  return `${type} ${min}..${max}`;
}

function rangeWords(min: bigint, max: bigint): string {
  if (max === U64_MAX || max === USIZE_MAX) return `at least ${min}`;
  return `between ${min} and ${max}`;
}

/** An unsigned integer kept exact as a bigint: u64 and usize fields. */
export function bigInteger(type: IntegerType, bounds: IntegerBounds = {}): Decoder<bigint> {
  return integerCore(type, bounds);
}

/** An unsigned integer whose bounds fit a JS number exactly: u32 fields and small ranges. */
export function integer(type: IntegerType, bounds: IntegerBounds = {}): Decoder<number> {
  const core = integerCore(type, { min: bounds.min ?? 0, max: bounds.max ?? TYPE_MAX[type] });
  if (BigInt(bounds.max ?? TYPE_MAX[type]) > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`integer(${type}) needs a max within 2^53; use bigInteger`);
  }
  const min = Number(bounds.min ?? 0);
  const max = Number(bounds.max ?? TYPE_MAX[type]);
  return {
    expected: core.expected,
    schema: core.schema,
    // A JS integer already within bounds (protobuf fields, code) needs no text round trip;
    // everything else, and every refusal, goes through the core's checks in their order.
    run: (value, path) =>
      typeof value === "number" &&
      Number.isInteger(value) &&
      value >= min &&
      value <= max &&
      !Object.is(value, -0)
        ? value
        : Number(core.run(value, path)),
  };
}

export const u32 = (bounds: IntegerBounds = {}) => integer("u32", bounds);
export const u64 = (bounds: IntegerBounds = {}) => bigInteger("u64", bounds);
export const usize = (bounds: IntegerBounds = {}) => bigInteger("usize", bounds);
export const positiveU64 = () => bigInteger("u64", { min: 1 });
export const positiveUsize = () => bigInteger("usize", { min: 1 });

/** A finite number, whole or not (backoff seconds, ratios); kept as a JS number. */
export function finiteNumber(bounds: { min?: number; max?: number } = {}): Decoder<number> {
  const expected = "number";
  return {
    expected,
    schema: {
      type: "number",
      ...(bounds.min === undefined ? {} : { minimum: bounds.min }),
      ...(bounds.max === undefined ? {} : { maximum: bounds.max }),
    },
    run(value, path) {
      const text = numberText(value);
      if (text === undefined) {
        if (value === null) refuse("null", path, `null is not accepted; expected ${expected}`);
        refuse("type", path, `expected ${expected}, found ${describeValue(value)}`);
      }
      const n = Number(text);
      if (!Number.isFinite(n)) refuse("overflow", path, `must be a finite number, found ${text}`);
      if (bounds.min !== undefined && n < bounds.min) {
        refuse("range", path, `must be at least ${bounds.min}, found ${text}`);
      }
      if (bounds.max !== undefined && n > bounds.max) {
        refuse("range", path, `must be at most ${bounds.max}, found ${text}`);
      }
      return n;
    },
  };
}
