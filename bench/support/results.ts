/**
 * The results file a benchmark writes (bench/results/<name>.json) and its decoder, shared by
 * the harness that writes it, `bench:smoke` that checks a smoke run produced figures, and
 * `bench:report` that renders README's figures from it. A figure is a number (NaN and
 * infinities become null in JSON, and count as no figure) or a word ("skipped" says why a
 * case did not run). Figures carried from before the harness recorded where they came from
 * have `carried` set and no commit.
 */

import {
  array,
  boolean,
  type Decoded,
  type Decoder,
  decodeJson,
  describeValue,
  finiteNumber,
  nullable,
  numberText,
  object,
  optional,
  refuse,
  string,
  stringMap,
} from "../../src/common/decode/index.ts";

const figure: Decoder<number | string | null> = {
  expected: "number, string or null",
  run(value, path) {
    if (value === null || typeof value === "string") return value;
    const text = numberText(value);
    if (text === undefined)
      refuse("type", path, `expected a figure, found ${describeValue(value)}`);
    return Number(text);
  },
};

const benchResult = object({
  name: string({ minBytes: 1 }),
  smoke: boolean(),
  /** ISO date of the run; for carried figures, the date they were stated (or null). */
  at: nullable(string()),
  loadavg: nullable(array(finiteNumber())),
  commit: nullable(string()),
  dirty: nullable(boolean()),
  machine: optional(
    object({ node: string(), cpus: finiteNumber(), cpu: string(), memory_bytes: finiteNumber() }),
  ),
  /** Paths (files or folders) whose change after `commit` makes these figures stale. */
  measures: array(string({ minBytes: 1 }), { min: 1 }),
  knobs: stringMap(finiteNumber()),
  /** Where carried figures come from (they were not measured by this harness). */
  carried: optional(string()),
  rows: array(object({ case: string(), figures: stringMap(figure) })),
});

export type BenchResult = Decoded<typeof benchResult>;

/** Decodes a results file's text; throws a DecodeError naming the bad field. */
export function parseResult(text: string): BenchResult {
  return decodeJson(benchResult, text);
}

/** The row's figures that are finite numbers. */
export function numericFigures(figures: ReadonlyMap<string, number | string | null>): number {
  let n = 0;
  for (const value of figures.values())
    if (typeof value === "number" && Number.isFinite(value)) n++;
  return n;
}

/** Why a case did not run, when it says so. */
export function skipReason(
  figures: ReadonlyMap<string, number | string | null>,
): string | undefined {
  const reason = figures.get("skipped");
  return typeof reason === "string" ? reason : undefined;
}
