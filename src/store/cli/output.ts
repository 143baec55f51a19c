/**
 * What a client command prints. `--output json` prints the verb's result as JSON (exact:
 * integers beyond 2^53 keep their digits), `--output text` prints it for people: pages as
 * tables, receipts as one line, nested values as compact JSON. Without `--output` a
 * terminal gets text and anything else (a pipe, a script) gets JSON, so scripts keep
 * parsing what they parsed before. Colour is used on a terminal unless NO_COLOR is set, or
 * anywhere with FORCE_COLOR.
 */

import { type Io, UsageError } from "../../common/cli.ts";

export const outputOption = { output: { type: "string" } } as const;

/** True when the result should be printed as text rather than JSON. */
export function textOutput(values: { output?: string | undefined }, io: Io): boolean {
  if (values.output === undefined) return io.tty === true;
  if (values.output === "text") return true;
  if (values.output === "json") return false;
  throw new UsageError("--output must be text or json");
}

/** JSON of an answer; integers beyond 2^53 (bigints) print as their exact digits. */
export function formatJson(value: unknown): string {
  const json = JSON as typeof JSON & { rawJSON(text: string): unknown };
  return JSON.stringify(
    value,
    (_key, item: unknown) => (typeof item === "bigint" ? json.rawJSON(item.toString()) : item),
    2,
  );
}

export interface Paint {
  readonly added: (text: string) => string;
  readonly removed: (text: string) => string;
  readonly changed: (text: string) => string;
  readonly dim: (text: string) => string;
  readonly bold: (text: string) => string;
}

const plain = (text: string) => text;
const ansi = (code: string) => (text: string) => `\u001b[${code}m${text}\u001b[0m`;

export function paintFor(
  io: Io,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Paint {
  const forced = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0";
  const on = forced || (io.tty === true && (env.NO_COLOR === undefined || env.NO_COLOR === ""));
  if (!on) return { added: plain, removed: plain, changed: plain, dim: plain, bold: plain };
  return {
    added: ansi("32"),
    removed: ansi("31"),
    changed: ansi("33"),
    dim: ansi("2"),
    bold: ansi("1"),
  };
}

/** A value as one short cell: strings as they are, anything else as compact JSON. */
export function cell(value: unknown, width = 60): string {
  const text =
    value === undefined
      ? ""
      : typeof value === "string"
        ? value
        : (formatJson(value) ?? "").replace(/\s*\n\s*/g, " ");
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

/** Rows as an aligned table with a header; columns default to every key in row order. */
export function table(rows: readonly Record<string, unknown>[], columns?: string[]): string {
  const cols = columns ?? [...new Set(rows.flatMap((r) => Object.keys(r)))];
  if (rows.length === 0) return "(none)";
  const cells = rows.map((r) => cols.map((c) => cell(r[c])));
  const widths = cols.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(cols.map((c) => c.toUpperCase())), ...cells.map(line)].join("\n");
}

/** A receipt (or any flat object) on one line: `version 12  author a  message …`. */
export function receiptLine(receipt: Record<string, unknown>): string {
  return Object.entries(receipt)
    .map(([k, v]) => `${k} ${cell(v)}`)
    .join("  ");
}

/** Any verb result as text: a page as a table, an object as `key: value` lines. */
export function renderText(result: unknown): string {
  if (result === null || typeof result !== "object" || Array.isArray(result)) return cell(result);
  const record = result as Record<string, unknown>;
  const lines: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (Array.isArray(value) && value.every((v) => v !== null && typeof v === "object")) {
      lines.push(`${key}:`, table(value.map(flatten)));
    } else lines.push(`${key}: ${cell(value, 200)}`);
  }
  return lines.join("\n");
}

/** A row with its receipt-like members spread (`head.version` → `head_version`). */
function flatten(row: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row as Record<string, unknown>)) {
    if (
      value !== null &&
      typeof value === "object" &&
      !Array.isArray(value) &&
      "version" in value
    ) {
      for (const [k, v] of Object.entries(value)) out[`${key}_${k}`] = v;
    } else out[key] = value;
  }
  return out;
}
