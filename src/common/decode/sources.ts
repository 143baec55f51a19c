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

/**
 * How deep JSON may nest (arrays and objects; the outermost value is level 1). Past a few
 * thousand levels the parser and `JSON.stringify` overflow the stack (a 500 at ~3,000), and
 * every recursive walk after them (decoders, the reply serializer, JSONata) is at risk; no
 * document or value of ours comes near 512, which leaves those walks a wide margin.
 */
export const MAX_JSON_DEPTH = 512;

export const JSON_TOO_DEEP = "json_too_deep";

const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The deepest nesting of `text`, counting brackets outside strings, stopping as soon as it
 * passes `limit`: one linear pass with no allocation, so the check costs less than the
 * parse it guards. Malformed text is left for the parser to refuse.
 */
export function jsonDepthExceeds(text: string, limit: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: a backslash escapes the character after it.
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/**
 * Parses JSON text keeping every number as its source text. Throws a DecodeError: code
 * `json_too_deep` for nesting beyond MAX_JSON_DEPTH, else a syntax refusal.
 */
export function parseJson(text: string, path?: Path): unknown {
  if (jsonDepthExceeds(text)) {
    refuse("shape", path, `nests deeper than ${MAX_JSON_DEPTH} levels`, JSON_TOO_DEEP);
  }
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
