/**
 * The Markdown that `bench:report` puts between the markers: per bench script, each results
 * file's cases and figures, headed by when, at what load and at which commit they were
 * measured, and whether the code they measure has changed since (or whether that cannot be
 * told). A bench script with no results says so, so a new bench without figures shows.
 */

import type { BenchResult } from "./results.ts";
import type { Freshness } from "./staleness.ts";

export interface ReportEntry {
  readonly script: string;
  readonly results: readonly { result: BenchResult; freshness: Freshness }[];
}

function figure(value: number | string | null): string {
  if (value === null) return "n/a";
  if (typeof value === "string") return value;
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  return value.toLocaleString("en-US", { maximumFractionDigits: 3 });
}

function when(result: BenchResult): string {
  const date = result.at === null ? "date not stated" : result.at.slice(0, 10);
  const load = result.loadavg === null ? "load not recorded" : `load ${result.loadavg.join(" / ")}`;
  const commit =
    result.commit === null
      ? "commit unknown"
      : `commit \`${result.commit.slice(0, 7)}\`${result.dirty ? " with uncommitted changes" : ""}`;
  return `${date}, ${load}, ${commit}`;
}

function verdict(f: Freshness): string | undefined {
  switch (f.kind) {
    case "current":
      return undefined;
    case "unknown-commit":
      return "Cannot tell whether the code changed since: the commit was not recorded.";
    case "foreign-commit":
      return "Cannot tell whether the code changed since: the commit is not in this history.";
    case "stale": {
      const shown = f.changed.slice(0, 4).map((p) => `\`${p}\``);
      const more = f.changed.length > shown.length ? ` and ${f.changed.length - 4} more` : "";
      return `**Stale**: the measured code changed since (last in ${f.since}: ${shown.join(", ")}${more}).`;
    }
  }
}

function sizes(result: BenchResult): string {
  if (result.knobs.size === 0) return "";
  const list = [...result.knobs].map(([k, v]) => `${k}=${figure(v)}`).join(", ");
  return `; sizes ${list}`;
}

/** The block for `entries`, in their order. */
export function renderReport(entries: readonly ReportEntry[]): string {
  const lines: string[] = [];
  for (const { script, results } of entries) {
    if (results.length === 0) {
      lines.push(`- \`${script}\`: no results recorded yet.`);
      continue;
    }
    for (const { result, freshness } of results) {
      const origin = result.carried === undefined ? "" : `, carried from ${result.carried}`;
      lines.push(`- \`${script}\` (${result.name}): ${when(result)}${origin}${sizes(result)}.`);
      const note = verdict(freshness);
      if (note !== undefined) lines.push(`  ${note}`);
      for (const row of result.rows) {
        const figures = [...row.figures].map(([k, v]) => `${k} ${figure(v)}`).join(" · ");
        lines.push(`  - ${row.case}: ${figures}`);
      }
    }
  }
  return lines.join("\n");
}
