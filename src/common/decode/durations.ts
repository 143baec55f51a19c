/**
 * Durations that must be representable on the monotonic clock. The clock counts nanoseconds
 * in a u64 (`process.hrtime.bigint()`); a duration is accepted only when "now + duration",
 * in nanoseconds, still fits. So `timeout_ms = 18446744073709551615` is a valid u64 that no
 * deadline can be built from, and is refused with the reason the field names.
 */

import type { Decoder } from "./decoder.ts";
import { type IntegerBounds, U64_MAX, u64 } from "./numbers.ts";
import { refuse } from "./refusal.ts";

export type DurationUnit = "ms" | "s";

const NANOS: Record<DurationUnit, bigint> = { ms: 1_000_000n, s: 1_000_000_000n };

/** Nanoseconds on the monotonic clock now; injectable for tests of the overflow edge. */
export type MonotonicNow = () => bigint;
export const monotonicNow: MonotonicNow = () => process.hrtime.bigint();

/** The largest duration in `unit` that can be added to the clock at `now` without overflow. */
export function largestRepresentable(unit: DurationUnit, now: bigint = monotonicNow()): bigint {
  return (U64_MAX - now) / NANOS[unit];
}

export interface DurationOptions extends IntegerBounds {
  /** The refusal reason when the clock cannot represent the duration (the spec's words). */
  readonly clockReason?: string;
  readonly now?: MonotonicNow;
}

/** A u64 count of `unit`s (default minimum 1) that the monotonic clock can represent. */
export function duration(unit: DurationUnit, options: DurationOptions = {}): Decoder<bigint> {
  const count = u64({
    min: options.min ?? 1,
    ...(options.max === undefined ? {} : { max: options.max }),
  });
  const now = options.now ?? monotonicNow;
  return {
    expected: `${count.expected} ${unit === "ms" ? "milliseconds" : "seconds"}`,
    schema: {
      ...count.schema,
      description: `${count.expected} ${unit === "ms" ? "milliseconds" : "seconds"}`,
    },
    run(value, path) {
      const n = count.run(value, path);
      const largest = largestRepresentable(unit, now());
      if (n > largest) {
        const reason = options.clockReason ?? "cannot be represented by the monotonic clock";
        refuse("clock", path, `${reason} (at most ${largest} ${unit} from now), found ${n}`);
      }
      return n;
    },
  };
}

export const durationMs = (options: DurationOptions = {}) => duration("ms", options);
export const durationSeconds = (options: DurationOptions = {}) => duration("s", options);
