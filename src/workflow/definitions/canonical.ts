/**
 * The canonical form of a definition document, whose sha256 is the definition's version.
 * The same workflow written in YAML or JSON, with keys in any order or numbers written as
 * `1.50` or `1.5`, has one canonical form: keys sorted by code unit, no whitespace, integers
 * in plain decimal, other numbers in JavaScript's shortest form.
 */

import { createHash } from "node:crypto";
import { numberText } from "../../common/decode/index.ts";

export function canonicalJson(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  const number = numberText(value);
  if (number !== undefined) {
    if (/^-?(0|[1-9][0-9]*)$/.test(number)) return BigInt(number).toString();
    return JSON.stringify(Number(number));
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  throw new TypeError(`not a JSON value: ${typeof value}`);
}

export function versionOf(canonical: string): string {
  return `sha256:${createHash("sha256").update(canonical).digest("hex")}`;
}
