/**
 * The benchmark harness behind every `npm run bench:<name>`: a benchmark is a list of cases,
 * each returning named figures; the harness prints them as one table and writes them, with
 * where and when they were measured (date, load average, commit, dirty tree), the sizes
 * used and the paths the bench measures, to bench/results/<name>.json, which
 * `npm run bench:report` turns into README's figures. A smoke run (`SKEIN_BENCH_SMOKE=1`)
 * never writes there: it writes to SKEIN_BENCH_RESULTS or a temporary directory. Helpers
 * here time loops and compute percentiles; nothing is asserted.
 */

import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { knobsRead, SMOKE } from "./support/mode.ts";
import { provenance } from "./support/provenance.ts";

export { knob, SMOKE } from "./support/mode.ts";

export type Figures = Record<string, number | string>;

export interface BenchCase {
  readonly name: string;
  run(): Promise<Figures> | Figures;
}

export interface BenchOptions {
  /**
   * Paths from the repository root (folders or files) whose code the figures measure: a
   * change to them after the measured commit marks the figures stale in `bench:report`.
   */
  readonly measures: readonly string[];
}

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Taken as the bench starts (the harness is imported before any work). */
const STARTED = provenance(ROOT);

function resultsDir(): string {
  const chosen = process.env.SKEIN_BENCH_RESULTS;
  if (chosen !== undefined && chosen !== "") return chosen;
  // A smoke run's tiny figures must never replace measured ones.
  if (SMOKE) return mkdtempSync(join(tmpdir(), "skein-bench-smoke-"));
  return join(ROOT, "bench", "results");
}

/** A case's figures when what it needs is absent here (printed, recorded, not measured). */
export function skipped(reason: string): Figures {
  process.stderr.write(`  skipped: ${reason}\n`);
  return { skipped: reason };
}

export async function runBench(
  name: string,
  options: BenchOptions,
  cases: readonly BenchCase[],
): Promise<void> {
  const rows: { case: string; figures: Figures }[] = [];
  for (const c of cases) {
    const figures = await c.run();
    rows.push({ case: c.name, figures });
    process.stderr.write(`  ${c.name}: done\n`);
  }
  process.stdout.write(`${formatTable(name, rows)}\n`);
  const dir = resultsDir();
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  const result = {
    name,
    smoke: SMOKE,
    ...STARTED,
    // The bench's own file measures too: a change to its workload changes its figures.
    measures: [...(process.argv[1] ? [relative(ROOT, process.argv[1])] : []), ...options.measures],
    knobs: knobsRead(),
    rows,
  };
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  const where = STARTED.commit === null ? "no commit" : STARTED.commit.slice(0, 12);
  process.stdout.write(
    `results written to ${file} (load ${STARTED.loadavg.join(" ")}, ${where}` +
      `${STARTED.dirty ? ", uncommitted changes" : ""}${SMOKE ? ", smoke size" : ""})\n`,
  );
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
export function throughput(
  fn: () => void,
  seconds = SMOKE ? 0.05 : 1,
): { ops_per_s: number; ops: number } {
  const warmUntil = performance.now() + (SMOKE ? 5 : 100);
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
