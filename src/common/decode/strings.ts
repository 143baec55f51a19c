/**
 * Strings and the shapes built on them: bounded strings (measured in UTF-8 bytes, as the
 * spec measures them), enumerations, booleans and absolute paths. A shape rule refuses with
 * kind `shape` and the reason the caller gives, so a field can carry the spec's own words.
 */

import { isAbsolute } from "node:path";
import type { Decoder, JsonSchema } from "./decoder.ts";
import { describeValue, type Path, refuse } from "./refusal.ts";

function expectType(value: unknown, path: Path, type: string, expected: string): void {
  if (typeof value === type) return;
  if (value === null) refuse("null", path, `null is not accepted; expected ${expected}`);
  refuse("type", path, `expected ${expected}, found ${describeValue(value)}`);
}

export interface StringOptions {
  readonly minBytes?: number;
  readonly maxBytes?: number;
  /** Trim surrounding whitespace before the other rules. */
  readonly trim?: boolean;
  /** A whole-string pattern and the reason given when it does not match. */
  readonly pattern?: RegExp;
  readonly patternReason?: string;
  readonly expected?: string;
  /**
   * Refuse control characters (C0 with NUL, tab and newline; DEL; C1) and bidirectional
   * embedding, override and isolate controls anywhere in the string: for names that become
   * keys, log fields or labels, where a NUL or newline forges a joined key or a log line and
   * a bidi control makes one name display as another.
   */
  readonly noControl?: boolean;
  /** A JSON Schema `format` for documents (`uuid`); the decoder does not use it. */
  readonly format?: string;
}

/** A string decoder's schema: byte bounds become (looser) character bounds; a pattern with
 * flags, which JSON Schema cannot carry, is left out. */
function stringSchema(options: StringOptions): JsonSchema {
  const { minBytes, maxBytes, pattern } = options;
  return {
    type: "string",
    ...(options.expected === undefined ? {} : { description: options.expected }),
    // A character is 1 to 4 UTF-8 bytes: n bytes need at least ceil(n / 4) characters.
    ...(minBytes === undefined || options.trim ? {} : { minLength: Math.ceil(minBytes / 4) }),
    ...(maxBytes === undefined || options.trim ? {} : { maxLength: maxBytes }),
    ...(pattern === undefined || pattern.flags !== "" ? {} : { pattern: pattern.source }),
    ...(options.format === undefined ? {} : { format: options.format }),
  };
}

const CONTROL = /[\p{Cc}\u202A-\u202E\u2066-\u2069]/u;
const NO_CONTROL_REASON = "must not contain control characters or bidirectional controls";

export function string(options: StringOptions = {}): Decoder<string> {
  const expected = options.expected ?? "string";
  const { minBytes, maxBytes, pattern } = options;
  return {
    expected,
    schema: stringSchema(options),
    run(value, path) {
      expectType(value, path, "string", expected);
      const s = options.trim ? (value as string).trim() : (value as string);
      if (minBytes !== undefined || maxBytes !== undefined) {
        const bytes = Buffer.byteLength(s, "utf8");
        if (minBytes !== undefined && bytes < minBytes) {
          refuse(
            "shape",
            path,
            minBytes === 1 ? "must not be empty" : `must be at least ${minBytes} bytes`,
          );
        }
        if (maxBytes !== undefined && bytes > maxBytes) {
          refuse("shape", path, `must be at most ${maxBytes} bytes, found ${bytes}`);
        }
      }
      if (pattern !== undefined && !pattern.test(s)) {
        refuse("shape", path, options.patternReason ?? `must match ${pattern}`);
      }
      if (options.noControl === true && CONTROL.test(s)) refuse("shape", path, NO_CONTROL_REASON);
      return s;
    },
  };
}

export function boolean(): Decoder<boolean> {
  return {
    expected: "boolean",
    schema: { type: "boolean" },
    run(value, path) {
      expectType(value, path, "boolean", "boolean");
      return value as boolean;
    },
  };
}

/** One of a fixed set of strings. */
export function oneOf<const T extends string>(values: readonly T[]): Decoder<T> {
  const allowed = new Set<string>(values);
  const words = values.map((v) => JSON.stringify(v)).join(", ");
  const expected = `one of ${words}`;
  return {
    expected,
    schema: { type: "string", enum: [...values] },
    run(value, path) {
      expectType(value, path, "string", expected);
      if (!allowed.has(value as string)) {
        refuse("range", path, `must be ${expected}, found ${JSON.stringify(value)}`);
      }
      return value as T;
    },
  };
}

/** An absolute filesystem path (not resolved here: resolution is a start-up check). */
export function absolutePath(options: { reason?: string } = {}): Decoder<string> {
  const reason = options.reason ?? "must be an absolute path";
  return {
    expected: "absolute path string",
    schema: { type: "string", pattern: "^/", description: "absolute path" },
    run(value, path) {
      expectType(value, path, "string", "absolute path string");
      const s = value as string;
      if (s.length === 0 || s.includes("\0") || !isAbsolute(s)) refuse("shape", path, reason);
      return s;
    },
  };
}
