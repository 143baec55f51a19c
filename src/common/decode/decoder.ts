/**
 * The decoder abstraction. A `Decoder<T>` turns an untrusted value (parsed JSON, TOML, an
 * environment variable) into a `T` or raises a DecodeError naming the path. Decoders are
 * plain data built once at start-up and composed: primitives, objects, arrays, maps, tagged
 * unions, plus the wrappers here (nullable, refine, withCode, map). `decode` is the one entry
 * point that turns a thrown refusal into a typed result.
 */

import { DecodeError, type Path, type RefusalKind, refuse } from "./refusal.ts";

/**
 * A JSON Schema (2020-12) fragment describing what a decoder accepts, for documents made
 * from the decoders themselves (OpenAPI, editor schemas): never stricter than the decoder
 * (a rule it cannot say, such as a byte length or a cross-field check, is left out or
 * loosened), so a value the server accepts always validates.
 */
export type JsonSchema = Readonly<Record<string, unknown>>;

export interface Decoder<T> {
  /** What the decoder expects, in words ("u64", "absolute path string"); used in refusals. */
  readonly expected: string;
  /** Decodes `value` found at `path`; throws DecodeError. */
  run(value: unknown, path: Path): T;
  /** What it accepts as JSON Schema; absent: described by `expected` only (`schemaOf`). */
  readonly schema?: JsonSchema;
}

/** A decoder's JSON Schema, or a description of what it expects when it declares none. */
export function schemaOf(decoder: Decoder<unknown>): JsonSchema {
  return decoder.schema ?? { description: decoder.expected };
}

/** The same decoder, described by `schema` (for decoders written by hand). */
export function described<T>(decoder: Decoder<T>, schema: JsonSchema): Decoder<T> {
  return { expected: decoder.expected, run: decoder.run, schema };
}

export type Decoded<D> = D extends Decoder<infer T> ? T : never;

export type DecodeResult<T> = { ok: true; value: T } | { ok: false; error: DecodeError };

/** Decodes a whole document; never throws for bad input. */
export function decode<T>(decoder: Decoder<T>, value: unknown, root?: Path): DecodeResult<T> {
  try {
    return { ok: true, value: decoder.run(value, root) };
  } catch (error) {
    if (error instanceof DecodeError) return { ok: false, error };
    throw error;
  }
}

/** Decodes or throws the DecodeError: for callers that already sit inside a try. */
export function decodeOrThrow<T>(decoder: Decoder<T>, value: unknown, root?: Path): T {
  return decoder.run(value, root);
}

/** Accepts `null` as a value; every other decoder refuses it with a `null` refusal. */
export function nullable<T>(inner: Decoder<T>): Decoder<T | null> {
  return {
    expected: `${inner.expected} or null`,
    run: (value, path) => (value === null ? null : inner.run(value, path)),
    schema: { anyOf: [schemaOf(inner), { type: "null" }] },
  };
}

/** A check on an already decoded value: returns a reason to refuse, or undefined. */
export type Check<T> = (value: T) => string | undefined;

/** Adds a rule to a decoder; a failing rule refuses with `kind` (default `rule`). */
export function refine<T>(
  inner: Decoder<T>,
  check: Check<T>,
  options: { kind?: RefusalKind; code?: string } = {},
): Decoder<T> {
  return {
    expected: inner.expected,
    schema: schemaOf(inner),
    run(value, path) {
      const decoded = inner.run(value, path);
      const reason = check(decoded);
      if (reason !== undefined) refuse(options.kind ?? "rule", path, reason, options.code);
      return decoded;
    },
  };
}

/** Transforms a decoded value; the transform must not fail. */
export function map<T, U>(inner: Decoder<T>, transform: (value: T) => U): Decoder<U> {
  return {
    expected: inner.expected,
    schema: schemaOf(inner),
    run: (value, path) => transform(inner.run(value, path)),
  };
}

/**
 * Stamps the spec's code on refusals raised inside a field. `code` is either one code for
 * every refusal, or a table by refusal kind (a kind missing from the table keeps its code).
 * A code that an inner decoder already set more specifically is kept.
 */
export function withCode<T>(
  inner: Decoder<T>,
  code: string | Partial<Record<RefusalKind, string>>,
): Decoder<T> {
  return {
    expected: inner.expected,
    schema: schemaOf(inner),
    run(value, path) {
      try {
        return inner.run(value, path);
      } catch (error) {
        if (!(error instanceof DecodeError) || error.code !== "decode_refused") throw error;
        const stamped = typeof code === "string" ? code : code[error.kind];
        throw stamped === undefined ? error : error.withCode(stamped);
      }
    },
  };
}

/** Defers building a decoder until first use: for recursive schemas (steps inside steps). */
export function lazy<T>(make: () => Decoder<T>, expected: string, schema?: JsonSchema): Decoder<T> {
  let built: Decoder<T> | undefined;
  return {
    expected,
    ...(schema === undefined ? {} : { schema }),
    run: (value, path) => {
      built ??= make();
      return built.run(value, path);
    },
  };
}
