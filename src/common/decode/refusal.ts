/**
 * Decode refusals: the one error every decoder raises. A refusal knows the path of the
 * field it concerns (`retention.keep.days`, `stores."a b"`, `actions[2]`), a kind that says
 * which family of rule was broken, a reason in words, and a code: the spec's code where the
 * spec names one, else `decode_refused`. The message always reads `<path>: <reason>` so a
 * user sees the same form from every config file and every request body.
 */

import { SkeinError } from "../errors.ts";

/** Which family of rule a value broke; each reads differently in the reason. */
export type RefusalKind =
  | "missing" // a required field is absent
  | "unknown" // a field the object does not declare
  | "type" // the JSON type is wrong (string for a number, …)
  | "null" // null where the field does not accept null
  | "whole" // a number that is not a plain whole number (1.0, 1e3, -0)
  | "negative" // a negative number for an unsigned type
  | "overflow" // beyond the integer type itself (u64 max + 1)
  | "range" // inside the type but outside the field's bounds
  | "clock" // a duration the monotonic clock cannot represent
  | "shape" // a string or collection of the wrong shape (length, charset, form)
  | "rule"; // a rule across fields, or a rule the spec states in words

export const DEFAULT_DECODE_CODE = "decode_refused";

/** A link in the path from the document root to the value being decoded. */
export interface PathLink {
  readonly parent: Path;
  readonly key: string | number;
}
export type Path = PathLink | undefined;

export function child(parent: Path, key: string | number): PathLink {
  return { parent, key };
}

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** Renders a path as `a.b[2]."odd key"`; the root renders as the empty string. */
export function formatPath(path: Path): string {
  const keys: (string | number)[] = [];
  for (let link = path; link !== undefined; link = link.parent) keys.push(link.key);
  let out = "";
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i]!;
    if (typeof key === "number") out += `[${key}]`;
    else if (PLAIN_KEY.test(key)) out += out === "" ? key : `.${key}`;
    else out += `${out === "" ? "" : "."}${JSON.stringify(key)}`;
  }
  return out;
}

export class DecodeError extends SkeinError {
  readonly kind: RefusalKind;
  readonly field: string;
  readonly reason: string;

  constructor(kind: RefusalKind, path: Path, reason: string, code = DEFAULT_DECODE_CODE) {
    const field = formatPath(path);
    super(code, field === "" ? reason : `${field}: ${reason}`, { status: 400 });
    this.name = "DecodeError";
    this.kind = kind;
    this.field = field;
    this.reason = reason;
  }

  /** The same refusal carrying another code (a field's spec code stamped on a generic one). */
  withCode(code: string): DecodeError {
    const copy = new DecodeError(this.kind, undefined, this.reason, code);
    return Object.assign(copy, { field: this.field, message: this.message });
  }
}

export function refuse(kind: RefusalKind, path: Path, reason: string, code?: string): never {
  throw new DecodeError(kind, path, reason, code);
}

/** Names a value's JSON type for a `type` refusal: "found string", "found array". */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "bigint" || isNumberText(value)) return "number";
  return typeof value;
}

function isNumberText(value: unknown): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { isLosslessNumber?: unknown }).isLosslessNumber === true
  );
}
