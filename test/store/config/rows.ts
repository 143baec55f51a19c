/**
 * Row generators shared by the store configuration tables: documents are built as values
 * (numbers as LosslessNumber, so `18446744073709551616` and `1.0` reach the decoders as
 * written), changed at a path, and refusals are checked for kind, code, field and wording.
 */

import assert from "node:assert/strict";
import {
  DecodeError,
  type Decoder,
  decode,
  LosslessNumber,
  type RefusalKind,
  U32_MAX,
  U64_MAX,
} from "../../../src/common/decode/index.ts";

/** A JSON number exactly as written. */
export const n = (text: string | number | bigint) => new LosslessNumber(String(text));

export type Doc = Record<string, unknown>;
export const ABSENT = Symbol("absent");

/** A deep copy of `doc` with `value` at `path` (ABSENT deletes the field). */
export function setAt(doc: Doc, path: readonly string[], value: unknown): Doc {
  const [head, ...rest] = path;
  const copy: Doc = { ...doc };
  if (rest.length === 0) {
    if (value === ABSENT) delete copy[head!];
    else copy[head!] = value;
    return copy;
  }
  const inner = (doc[head!] ?? {}) as Doc;
  copy[head!] = setAt(inner, rest, value);
  return copy;
}

export function accept<T>(decoder: Decoder<T>, doc: unknown): T {
  const r = decode(decoder, doc);
  if (!r.ok) assert.fail(`expected acceptance, got: ${r.error.message}`);
  return r.value;
}

export interface Expected {
  readonly kind?: RefusalKind;
  readonly code?: string;
  readonly field?: string;
  /** The message starts with this. */
  readonly prefix?: string;
  /** The message contains this. */
  readonly includes?: string;
}

export function refusal<T>(decoder: Decoder<T>, doc: unknown, expected: Expected): DecodeError {
  const r = decode(decoder, doc);
  if (r.ok) assert.fail("expected a refusal, the document was accepted");
  const e = r.error;
  assert.ok(e instanceof DecodeError);
  if (expected.kind !== undefined) assert.equal(e.kind, expected.kind, e.message);
  assert.equal(e.code, expected.code ?? "decode_refused", e.message);
  if (expected.field !== undefined) assert.equal(e.field, expected.field, e.message);
  if (expected.prefix !== undefined) {
    assert.ok(e.message.startsWith(expected.prefix), `${e.message} ⟂ ${expected.prefix}`);
  }
  if (expected.includes !== undefined) {
    assert.ok(e.message.includes(expected.includes), `${e.message} ⟂ ${expected.includes}`);
  }
  assert.ok(!e.message.includes("\n"), "a refusal is one line");
  return e;
}

export type IntType = "u32" | "u64" | "usize" | "ms" | "s";

export interface IntField {
  readonly path: readonly string[];
  readonly type: IntType;
  readonly min: bigint;
  readonly max?: bigint;
  /** The decoded value when absent; "missing" for required fields. */
  readonly absent: "missing" | bigint | number | null;
  readonly nullable?: boolean;
  /** The code of a range refusal (below min, above max). */
  readonly rangeCode?: string;
  /** The code of every refusal. */
  readonly code?: string;
  /** The message prefix every refusal starts with. */
  readonly prefix?: string;
  /** Reads the decoded value of the field. */
  readonly read: (value: never) => unknown;
  /** Decoded as a JS number (u32 and small ranges) rather than a bigint. */
  readonly number?: boolean;
  /** Expected words of a below-min refusal. */
  readonly belowMin?: string;
  /** The refusal when absent, where it is not the field's own (a group rule). */
  readonly absentRefusal?: Expected;
  /** The refusal above max, where a rule across fields catches it first. */
  readonly aboveMax?: Expected;
}

export interface IntRow {
  readonly name: string;
  readonly value: unknown;
  readonly outcome: { accept: unknown } | { refuse: Expected };
}

const TYPE_MAX: Record<IntType, bigint> = {
  u32: U32_MAX,
  u64: U64_MAX,
  usize: U64_MAX,
  ms: U64_MAX,
  s: U64_MAX,
};

/** The rows every integer field is tested with: both edges, each refusal family, absence. */
export function intRows(f: IntField): IntRow[] {
  const field = f.path.join(".");
  const typeMax = TYPE_MAX[f.type];
  const duration = f.type === "ms" || f.type === "s";
  const max = f.max ?? typeMax;
  const as = (v: bigint) => (f.number ? Number(v) : v);
  const refuse = (kind: RefusalKind, code = f.code, includes?: string): IntRow["outcome"] => ({
    refuse: {
      kind,
      code: code ?? "decode_refused",
      field,
      prefix: f.prefix ?? `${field}: `,
      ...(includes === undefined ? {} : { includes }),
    },
  });
  const rows: IntRow[] = [
    { name: `min ${f.min}`, value: n(f.min), outcome: { accept: as(f.min) } },
    { name: "-1", value: n(-1), outcome: refuse("negative") },
    { name: "1.5", value: n("1.5"), outcome: refuse("whole") },
    { name: "1.0", value: n("1.0"), outcome: refuse("whole") },
    { name: "1e3", value: n("1e3"), outcome: refuse("whole") },
    { name: "-0", value: n("-0"), outcome: refuse("whole") },
    { name: "string", value: "1", outcome: refuse("type") },
    { name: "boolean", value: true, outcome: refuse("type") },
    { name: "array", value: [1], outcome: refuse("type") },
    { name: "object", value: {}, outcome: refuse("type") },
    { name: `type max + 1`, value: n(typeMax + 1n), outcome: refuse("overflow") },
    f.nullable
      ? { name: "null", value: null, outcome: { accept: null } }
      : { name: "null", value: null, outcome: refuse("null") },
    f.absentRefusal !== undefined
      ? { name: "absent", value: ABSENT, outcome: { refuse: f.absentRefusal } }
      : f.absent === "missing"
        ? { name: "absent", value: ABSENT, outcome: refuse("missing") }
        : { name: "absent", value: ABSENT, outcome: { accept: f.absent } },
  ];
  if (f.min > 0n) {
    rows.push({
      name: `below min ${f.min - 1n}`,
      value: n(f.min - 1n),
      outcome: refuse("range", f.code ?? f.rangeCode, f.belowMin),
    });
  }
  if (duration) {
    rows.push({ name: "10^12", value: n(10n ** 12n), outcome: { accept: 10n ** 12n } });
    rows.push({ name: "u64 max (clock)", value: n(U64_MAX), outcome: refuse("clock") });
  } else {
    rows.push({ name: `max ${max}`, value: n(max), outcome: { accept: as(max) } });
    if (max < typeMax) {
      rows.push({
        name: `above max ${max + 1n}`,
        value: n(max + 1n),
        outcome: f.aboveMax ? { refuse: f.aboveMax } : refuse("range", f.code ?? f.rangeCode),
      });
    }
  }
  return rows;
}
