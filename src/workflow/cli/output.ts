/**
 * How client commands print: JSON (one value, or one value per line for lists, numbers
 * exactly as the server sent them) or text for a person (aligned tables, `key: value`
 * lines). Commands build both from the same answer, so the two never disagree on content.
 */

import { stringify } from "lossless-json";
import type { Io } from "../../common/cli.ts";
import type { OutputMode } from "./options.ts";

export function json(value: unknown): string {
  return stringify(value) ?? "null";
}

/** An aligned table; `(none)` under the header when there are no rows. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...(rows.length === 0 ? ["(none)"] : rows.map(line))].join("\n");
}

/** `key: value` lines, values written as text (objects as compact JSON). */
export function fields(pairs: readonly (readonly [string, unknown])[]): string {
  const width = Math.max(...pairs.map(([k]) => k.length)) + 1;
  return pairs.map(([k, v]) => `${`${k}:`.padEnd(width)} ${cell(v)}`).join("\n");
}

/** One value as a table cell: `-` for null, strings bare, the rest as compact JSON. */
export function cell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (typeof value === "string") return value;
  return json(value);
}

/** Prints one answer: `value` as JSON, or `text()` for a person. */
export function emit(io: Io, mode: OutputMode, value: unknown, text: () => string): void {
  io.out(mode === "json" ? json(value) : text());
}

/** Prints a list: one JSON value per line, or `text()` for a person. */
export function emitLines(
  io: Io,
  mode: OutputMode,
  values: readonly unknown[],
  text: () => string,
): void {
  if (mode === "text") io.out(text());
  else for (const v of values) io.out(json(v));
}
