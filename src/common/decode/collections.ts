/**
 * Arrays and maps. An array decodes each item at `path[i]`; a map decodes a JSON object
 * whose keys are names (checked by a key decoder) into a `Map`, so that a key such as
 * `__proto__` is just a key. Both take bounds on their size.
 */

import { type Decoder, schemaOf } from "./decoder.ts";
import { expectObject } from "./objects.ts";
import { child, describeValue, refuse } from "./refusal.ts";

export interface SizeBounds {
  readonly min?: number;
  readonly max?: number;
}

function sizeRule(kind: string, bounds: SizeBounds, size: number): string | undefined {
  if (bounds.min !== undefined && size < bounds.min) {
    return bounds.min === 1 ? "must not be empty" : `must have at least ${bounds.min} ${kind}`;
  }
  if (bounds.max !== undefined && size > bounds.max) {
    return `must have at most ${bounds.max} ${kind}, found ${size}`;
  }
  return undefined;
}

export function array<T>(item: Decoder<T>, bounds: SizeBounds = {}): Decoder<T[]> {
  const expected = `array of ${item.expected}`;
  return {
    expected,
    schema: {
      type: "array",
      items: schemaOf(item),
      ...(bounds.min === undefined ? {} : { minItems: bounds.min }),
      ...(bounds.max === undefined ? {} : { maxItems: bounds.max }),
    },
    run(value, path) {
      if (!Array.isArray(value)) {
        if (value === null) refuse("null", path, `null is not accepted; expected ${expected}`);
        refuse("type", path, `expected ${expected}, found ${describeValue(value)}`);
      }
      const reason = sizeRule("items", bounds, value.length);
      if (reason !== undefined) refuse("shape", path, reason);
      return value.map((v, i) => item.run(v, child(path, i)));
    },
  };
}

/** A JSON object used as a map from names to values. */
export function stringMap<T>(
  value: Decoder<T>,
  options: SizeBounds & { key?: Decoder<string> } = {},
): Decoder<Map<string, T>> {
  const expected = `object of ${value.expected}`;
  const keySchema = options.key?.schema;
  return {
    expected,
    schema: {
      type: "object",
      additionalProperties: schemaOf(value),
      ...(keySchema === undefined ? {} : { propertyNames: keySchema }),
      ...(options.min === undefined ? {} : { minProperties: options.min }),
      ...(options.max === undefined ? {} : { maxProperties: options.max }),
    },
    run(input, path) {
      const raw = expectObject(input, path, expected);
      const keys = Object.keys(raw);
      const reason = sizeRule("entries", options, keys.length);
      if (reason !== undefined) refuse("shape", path, reason);
      const out = new Map<string, T>();
      for (const key of keys) {
        const at = child(path, key);
        options.key?.run(key, at);
        out.set(key, value.run(raw[key], at));
      }
      return out;
    },
  };
}
