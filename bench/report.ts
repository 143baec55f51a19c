/**
 * `npm run bench:report`: writes the benchmark figures quoted in README.md (and in any docs/
 * page that asks for them) from bench/results/*.json, so a quoted figure is always one a
 * bench recorded, with its date, load average and commit, and is marked stale once the code
 * it measures has changed. It replaces what lies between the markers
 *
 *   <!-- bench-report:begin -->            every bench script, in package.json's order
 *   <!-- bench-report:begin store,query --> only these results
 *   <!-- bench-report:end -->
 *
 * and leaves the rest of each page alone. README.md must hold a block. Smoke results never
 * belong in bench/results and are refused.
 *
 *   node bench/report.ts [--root DIR]
 */

import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type ReportEntry, renderReport } from "./support/report-render.ts";
import { type BenchResult, parseResult } from "./support/results.ts";
import { freshness } from "./support/staleness.ts";

const TOOLS = new Set(["bench:smoke", "bench:report"]);
const BLOCK = /(<!-- bench-report:begin(?: ([\w,-]+))? -->\n)[\s\S]*?(<!-- bench-report:end -->)/g;

const { values } = parseArgs({
  options: { root: { type: "string", default: fileURLToPath(new URL("..", import.meta.url)) } },
});
const root = values.root;

const scripts = Object.entries(
  (
    JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      scripts?: Record<string, string>;
    }
  ).scripts ?? {},
).filter(([name]) => name.startsWith("bench:") && !TOOLS.has(name));

const dir = join(root, "bench", "results");
const results = new Map<string, BenchResult>();
for (const file of readdirSync(dir)
  .filter((f) => f.endsWith(".json"))
  .sort()) {
  let result: BenchResult;
  try {
    result = parseResult(readFileSync(join(dir, file), "utf8"));
  } catch (error) {
    throw new Error(`bench/results/${file}: ${(error as Error).message}`);
  }
  if (result.smoke) throw new Error(`bench/results/${file} holds smoke-size figures`);
  results.set(result.name, result);
}

/** Entries per script, each with the results of the bench files its command runs. */
const entries: ReportEntry[] = [];
const claimed = new Set<string>();
for (const [script, command] of scripts) {
  const runs = [...command.matchAll(/bench\/([\w-]+)\.bench\.ts/g)].map((m) => m[1]!);
  // A bench file is reported under the first script that runs it; a script that only runs
  // files reported already (`bench:workflows-server`, one half of `bench:workflows`) adds
  // no entry of its own.
  const names = runs.filter((name) => !claimed.has(name));
  if (runs.length > 0 && names.length === 0) continue;
  const found = names.flatMap((name) => {
    const result = results.get(name);
    if (result === undefined) return [];
    claimed.add(name);
    return [{ result, freshness: freshness(root, result) }];
  });
  entries.push({ script, results: found });
}
for (const [name, result] of results) {
  if (!claimed.has(name)) {
    entries.push({
      script: "no bench script",
      results: [{ result, freshness: freshness(root, result) }],
    });
  }
}

const pages = [
  "README.md",
  ...readdirSync(join(root, "docs"), { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".md"))
    .map((e) => join("docs", e.name)),
];
for (const page of pages) {
  const path = join(root, page);
  const text = readFileSync(path, "utf8");
  const updated = text.replace(BLOCK, (_, begin: string, only: string | undefined, end: string) => {
    const wanted = only?.split(",");
    const chosen =
      wanted === undefined
        ? entries
        : entries
            .map((e) => ({
              ...e,
              results: e.results.filter((r) => wanted.includes(r.result.name)),
            }))
            .filter((e) => e.results.length > 0);
    return `${begin}${renderReport(chosen)}\n${end}`;
  });
  if (page === "README.md" && !text.includes("<!-- bench-report:begin")) {
    throw new Error(
      "README.md has no <!-- bench-report:begin --> … <!-- bench-report:end --> block",
    );
  }
  if (updated !== text) {
    writeFileSync(path, updated);
    process.stdout.write(`bench:report: updated ${page}\n`);
  }
}
