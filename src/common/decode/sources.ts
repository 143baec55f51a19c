/**
 * Turning bytes into values for the decoders, without losing numbers. JSON goes through
 * lossless-json (numbers stay as their text, duplicate keys are refused); an environment
 * variable's text is offered as a number when it reads as one, so the same integer decoders
 * serve config files and the environment. Syntax errors are refusals like any other.
 */

import { isLosslessNumber, LosslessNumber, parse } from "lossless-json";
import type { Decoder } from "./decoder.ts";
import { DecodeError, type Path, refuse } from "./refusal.ts";

export { isLosslessNumber, LosslessNumber };

/** Parses JSON text keeping every number as its source text. Throws a DecodeError. */
export function parseJson(text: string, path?: Path): unknown {
  try {
    return parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return refuse("type", path, `not valid JSON: ${reason}`);
  }
}

/** Parses and decodes JSON text in one step. */
export function decodeJson<T>(decoder: Decoder<T>, text: string, path?: Path): T {
  return decoder.run(parseJson(text, path), path);
}

const NUMERIC = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/** An environment variable's text as a decoder input: a number when it reads as one. */
export function envValue(text: string): unknown {
  const trimmed = text.trim();
  return NUMERIC.test(trimmed) ? new LosslessNumber(trimmed) : text;
}

/** Reads a JSON number text exactly; for encoders that must write u64 values back. */
export function jsonNumber(value: bigint | number): LosslessNumber {
  return new LosslessNumber(String(value));
}

export function isDecodeError(error: unknown): error is DecodeError {
  return error instanceof DecodeError;
}
