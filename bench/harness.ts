/**
 * The benchmark harness behind every `npm run bench:<name>`: a benchmark is a list of cases,
 * each returning named figures; the harness prints them as one table and writes them, with
 * the machine and Node version, to bench/results/<name>.json (git-ignored) so runs can be
 * compared. Helpers here time loops and compute percentiles; nothing is asserted.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export type Figures = Record<string, number | string>;

export interface BenchCase {
  readonly name: string;
  run(): Promise<Figures> | Figures;
}

const RESULTS = join(dirname(fileURLToPath(import.meta.url)), "results");

export async function runBench(name: string, cases: readonly BenchCase[]): Promise<void> {
  const rows: { case: string; figures: Figures }[] = [];
  for (const c of cases) {
    const figures = await c.run();
    rows.push({ case: c.name, figures });
    process.stderr.write(`  ${c.name}: done\n`);
  }
  process.stdout.write(`${formatTable(name, rows)}\n`);
  mkdirSync(RESULTS, { recursive: true });
  const machine = {
    node: process.version,
    cpus: availableParallelism(),
    cpu: cpus()[0]?.model ?? "unknown",
    memory_bytes: totalmem(),
  };
  const file = join(RESULTS, `${name}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ name, at: new Date().toISOString(), machine, rows }, null, 2)}\n`,
  );
  process.stdout.write(`results written to bench/results/${name}.json\n`);
}

export function formatTable(
  title: string,
  rows: readonly { case: string; figures: Figures }[],
): string {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r.figures)))];
  const header = ["case", ...columns];
  const body = rows.map((r) => [r.case, ...columns.map((c) => formatFigure(r.figures[c]))]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((line) => line[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ");
  return [
    `# ${title}`,
    line(header),
    line(widths.map((w) => "-".repeat(w))),
    ...body.map(line),
  ].join("\n");
}

function formatFigure(value: number | string | undefined): string {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  return value.toLocaleString("en-US", { maximumFractionDigits: 3 });
}

/** Runs `fn` for about `seconds` (after a warm-up) and reports operations per second. */
export function throughput(fn: () => void, seconds = 1): { ops_per_s: number; ops: number } {
  const warmUntil = performance.now() + 100;
  while (performance.now() < warmUntil) fn();
  let ops = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  while (performance.now() < end) {
    for (let i = 0; i < 64; i++) fn();
    ops += 64;
  }
  const elapsed = (performance.now() - start) / 1000;
  return { ops_per_s: Math.round(ops / elapsed), ops };
}

/** Percentile (0..100) of a list of samples, by nearest rank. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}
