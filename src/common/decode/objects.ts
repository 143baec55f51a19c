/**
 * Objects declared as data. A shape maps each field name to a decoder (required) or to a
 * field spec made by `optional` or `withDefault`; `object(shape)` decodes a JSON object into
 * the typed value, refusing unknown fields, missing required fields and `null` where the
 * field does not take it. Cross-field rules hang off the object as `inspect` (on the raw
 * input, for rules about which fields are present) and `check` (on the decoded value).
 * `tagged` builds a union discriminated by a tag field from one shape per tag.
 */

import { type Decoder, type JsonSchema, schemaOf } from "./decoder.ts";
import { child, describeValue, type Path, refuse } from "./refusal.ts";

export interface Field<T> {
  readonly decoder: Decoder<T>;
  /** The value when the field is absent; throws a `missing` refusal for required fields. */
  readonly absent: (path: Path) => T;
  /** False for `optional` and `withDefault` fields. */
  readonly required?: boolean;
  /** The default, for schemas, when it is plain JSON (a string, number, boolean or null). */
  readonly default?: unknown;
}

export type FieldLike<T> = Decoder<T> | Field<T>;
export type Shape = Readonly<Record<string, FieldLike<unknown>>>;

type FieldValue<F> = F extends Field<infer T> ? T : F extends Decoder<infer T> ? T : never;
export type ShapeValue<S extends Shape> = { -readonly [K in keyof S]: FieldValue<S[K]> };

/** A field that may be absent; the decoded value is then `undefined`. */
export function optional<T>(decoder: Decoder<T>): Field<T | undefined> {
  return { decoder, absent: () => undefined, required: false };
}

/** A field that takes `value` when absent. An explicit `null` is still refused unless the
 * decoder is nullable: "optional does not mean null is accepted". */
export function withDefault<T>(decoder: Decoder<T>, value: T): Field<T> {
  const plain = value === null || ["string", "number", "boolean"].includes(typeof value);
  return { decoder, absent: () => value, required: false, ...(plain ? { default: value } : {}) };
}

export function required<T>(decoder: Decoder<T>): Field<T> {
  return {
    decoder,
    absent: (path) => refuse("missing", path, `missing required field (${decoder.expected})`),
    required: true,
  };
}

function asField<T>(spec: FieldLike<T>): Field<T> {
  return "absent" in spec ? spec : required(spec);
}

export type RawObject = Readonly<Record<string, unknown>>;

export interface ObjectOptions<T> {
  /** Rules about the raw input (which fields are present), run before fields decode. */
  readonly inspect?: (raw: RawObject, path: Path) => void;
  /** Rules across decoded fields; refuse with `refuse("rule", child(path, field), …)`. */
  readonly check?: (value: T, path: Path) => void;
  /** Fields to ignore rather than refuse (a tag handled by `tagged`). */
  readonly ignore?: readonly string[];
  readonly expected?: string;
}

export interface ObjectDecoder<T> extends Decoder<T> {
  readonly fields: readonly string[];
  readonly schema: JsonSchema;
}

/** An object's schema: its fields, which are required, and no others. */
function objectSchema(
  fields: readonly (readonly [string, Field<unknown>])[],
  extra: JsonSchema = {},
): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, field] of fields) {
    const inner = schemaOf(field.decoder);
    properties[name] = "default" in field ? { ...inner, default: field.default } : inner;
  }
  const required = fields.filter(([, f]) => f.required !== false).map(([name]) => name);
  return {
    type: "object",
    properties: { ...properties, ...extra },
    ...(required.length === 0 ? {} : { required }),
    additionalProperties: false,
  };
}

function isPlainObject(value: unknown): value is RawObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  // Parsed numbers are objects too; they are not JSON objects.
  return (value as { isLosslessNumber?: unknown }).isLosslessNumber !== true;
}

export function expectObject(value: unknown, path: Path, expected = "object"): RawObject {
  if (isPlainObject(value)) return value;
  if (value === null) refuse("null", path, `null is not accepted; expected ${expected}`);
  return refuse("type", path, `expected ${expected}, found ${describeValue(value)}`);
}

export function object<S extends Shape>(
  shape: S,
  options: ObjectOptions<ShapeValue<S>> = {},
): ObjectDecoder<ShapeValue<S>> {
  const names = Object.keys(shape);
  const fields = names.map((name) => [name, asField(shape[name]!)] as const);
  const known = new Set<string>([...names, ...(options.ignore ?? [])]);
  const expected = options.expected ?? "object";
  return {
    expected,
    fields: names,
    // Ignored fields are accepted as anything.
    schema: objectSchema(fields, Object.fromEntries((options.ignore ?? []).map((f) => [f, {}]))),
    run(value, path) {
      const raw = expectObject(value, path, expected);
      for (const key of Object.keys(raw)) {
        if (!known.has(key)) refuse("unknown", child(path, key), "unknown field");
      }
      options.inspect?.(raw, path);
      const out: Record<string, unknown> = {};
      for (const [name, field] of fields) {
        const at = child(path, name);
        out[name] = Object.hasOwn(raw, name) ? field.decoder.run(raw[name], at) : field.absent(at);
      }
      const decoded = out as ShapeValue<S>;
      options.check?.(decoded, path);
      return decoded;
    },
  };
}

type TaggedValue<Tag extends string, V extends Record<string, Shape>> = {
  [K in keyof V & string]: { [P in Tag]: K } & ShapeValue<V[K]>;
}[keyof V & string];

/**
 * A union discriminated by `tag`: `tagged("kind", { Cancel: { reason: string() } })` decodes
 * `{"kind":"Cancel","reason":"…"}` to `{ kind: "Cancel", reason: "…" }`. An absent or
 * unknown tag is refused at the tag's path.
 */
export function tagged<const Tag extends string, V extends Record<string, Shape>>(
  tag: Tag,
  variants: V,
): Decoder<TaggedValue<Tag, V>> {
  const decoders = new Map<string, ObjectDecoder<unknown>>();
  const schemas: JsonSchema[] = [];
  for (const [name, shape] of Object.entries(variants)) {
    decoders.set(name, object(shape, { ignore: [tag] }) as ObjectDecoder<unknown>);
    const fields = Object.entries(shape).map(([f, spec]) => [f, asField(spec)] as const);
    const variant = objectSchema(fields, { [tag]: { const: name } });
    schemas.push({ ...variant, required: [tag, ...((variant.required as string[]) ?? [])] });
  }
  const tags = [...decoders.keys()].map((t) => JSON.stringify(t)).join(", ");
  const expected = `object tagged by ${tag} (${tags})`;
  return {
    expected,
    schema: { oneOf: schemas },
    run(value, path) {
      const raw = expectObject(value, path, expected);
      const at = child(path, tag);
      if (!Object.hasOwn(raw, tag)) refuse("missing", at, `missing required tag (one of ${tags})`);
      const name = raw[tag];
      if (typeof name !== "string") {
        refuse("type", at, `expected one of ${tags}, found ${describeValue(name)}`);
      }
      const decoder = decoders.get(name);
      if (decoder === undefined)
        refuse("range", at, `must be one of ${tags}, found ${JSON.stringify(name)}`);
      return { [tag]: name, ...(decoder.run(raw, path) as object) } as TaggedValue<Tag, V>;
    },
  };
}
