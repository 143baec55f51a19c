/**
 * `npm run bench:smoke`: proves every benchmark still runs and still reports figures, so a
 * bench cannot rot unnoticed between the times someone measures with it. It runs each
 * `bench:*` script of package.json (read there, so a new bench is covered the day it is
 * added) through npm at the smoke size (`SKEIN_BENCH_SMOKE=1`), one after another, each
 * bounded in time, with its results written to a temporary directory (never over the
 * measured ones in bench/results). A bench fails when it exits non-zero (a throw included),
 * outlives its bound, or leaves no results file whose every case has a finite figure or
 * says why it was skipped: a printed header is not a figure. A script whose every command
 * another script also runs is left to that one in a whole run. CI runs it after the tests.
 *
 *   node bench/smoke.ts [--root DIR] [--timeout SECONDS] [NAME…]
 *
 * NAME (`store` or `bench:store`) runs only those scripts; --root is the project whose
 * package.json is read (the tests point it at a project of their own).
 */

import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { numericFigures, parseResult, skipReason } from "./support/results.ts";

/** The scripts that drive benchmarks rather than being one. */
const TOOLS = new Set(["bench:smoke", "bench:report"]);
/** Output kept per bench, shown when it fails. */
const TAIL_BYTES = 8192;

interface Outcome {
  readonly status: "ok" | "skipped" | "failed";
  readonly detail: string;
  readonly skips: readonly string[];
}

const { values, positionals } = parseArgs({
  options: {
    root: { type: "string", default: fileURLToPath(new URL("..", import.meta.url)) },
    timeout: { type: "string", default: "180" },
  },
  allowPositionals: true,
});
const root = values.root;
const timeoutMs = Number(values.timeout) * 1000;
if (!(timeoutMs > 0)) throw new Error(`--timeout ${values.timeout} is not a positive number`);

const commands = new Map(
  Object.entries(
    (
      JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
        scripts?: Record<string, string>;
      }
    ).scripts ?? {},
  ).filter(([name]) => name.startsWith("bench:") && !TOOLS.has(name)),
);
const scripts = [...commands.keys()];
const wanted = positionals.map((p) => (p.startsWith("bench:") ? p : `bench:${p}`));
for (const name of wanted) {
  if (!scripts.includes(name)) throw new Error(`${name} is not a bench script of package.json`);
}

/** A script's commands (`a && b` is two). */
const steps = (script: string) =>
  (commands.get(script) ?? "").split("&&").map((step) => step.trim());

/**
 * A script every command of which another script also runs (`bench:workflows-server` is
 * the second half of `bench:workflows`): a whole run leaves it to the larger one.
 */
const coveredBy = (script: string): string | undefined =>
  scripts.find(
    (other) =>
      other !== script &&
      steps(other).length > steps(script).length &&
      steps(script).every((step) => steps(other).includes(step)),
  );

const chosen =
  wanted.length === 0
    ? scripts.filter((s) => coveredBy(s) === undefined)
    : scripts.filter((s) => wanted.includes(s));
for (const script of scripts) {
  const by = wanted.length === 0 ? coveredBy(script) : undefined;
  if (by !== undefined) process.stdout.write(`${script}: run as part of ${by}\n`);
}

/** Runs one script at the smoke size; resolves with its exit, output tail and results dir. */
function run(script: string, results: string) {
  return new Promise<{ code: number | null; timedOut: boolean; tail: string }>((resolve) => {
    // Its own process group, so a timeout ends npm, the shell and every process they started.
    const child = spawn("npm", ["run", "-s", script], {
      cwd: root,
      env: { ...process.env, SKEIN_BENCH_SMOKE: "1", SKEIN_BENCH_RESULTS: results },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let tail = "";
    const keep = (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-TAIL_BYTES);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-child.pid!, "SIGKILL");
    }, timeoutMs);
    let code: number | null = null;
    child.once("exit", (exitCode) => {
      clearTimeout(timer);
      code = exitCode;
      // Whatever the bench left running (a server it spawned) goes with it, and with it the
      // last holder of the output pipes, so "close" follows.
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
    });
    child.once("close", () => resolve({ code, timedOut, tail }));
  });
}

/** What the results directory says about a bench that exited cleanly. */
function judge(results: string): Outcome {
  const files = readdirSync(results).filter((f) => f.endsWith(".json"));
  if (files.length === 0) {
    return { status: "failed", detail: "wrote no results file (no figure)", skips: [] };
  }
  let figures = 0;
  let measured = 0;
  const skips: string[] = [];
  for (const file of files) {
    const result = parseResult(readFileSync(join(results, file), "utf8"));
    if (!result.smoke) return { status: "failed", detail: `${file} is not marked smoke`, skips };
    if (result.rows.length === 0)
      return { status: "failed", detail: `${file} has no cases`, skips };
    for (const row of result.rows) {
      const count = numericFigures(row.figures);
      const reason = skipReason(row.figures);
      if (count === 0 && reason === undefined) {
        return {
          status: "failed",
          detail: `${file}: case "${row.case}" has no finite figure and no reason to skip`,
          skips,
        };
      }
      if (reason !== undefined) skips.push(`${row.case}: ${reason}`);
      else measured++;
      figures += count;
    }
  }
  const detail = `${files.join(", ")}: ${measured} cases measured, ${figures} figures`;
  return { status: measured === 0 ? "skipped" : "ok", detail, skips };
}

const began = performance.now();
let failed = 0;
for (const script of chosen) {
  const results = mkdtempSync(join(tmpdir(), "skein-bench-smoke-"));
  const t0 = performance.now();
  const { code, timedOut, tail } = await run(script, results);
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  let outcome: Outcome;
  if (timedOut) {
    outcome = { status: "failed", detail: `timed out after ${timeoutMs / 1000} s`, skips: [] };
  } else if (code !== 0) {
    outcome = { status: "failed", detail: `exited with code ${code}`, skips: [] };
  } else {
    try {
      outcome = judge(results);
    } catch (error) {
      outcome = { status: "failed", detail: `bad results: ${(error as Error).message}`, skips: [] };
    }
  }
  rmSync(results, { recursive: true, force: true });
  process.stdout.write(
    `${outcome.status.padEnd(7)} ${script.padEnd(20)} ${seconds.padStart(6)} s  ${outcome.detail}\n`,
  );
  for (const skip of outcome.skips) process.stdout.write(`        skipped: ${skip}\n`);
  if (outcome.status === "failed") {
    failed++;
    process.stdout.write(`${tail.replace(/^/gm, "        | ")}\n`);
  }
}
const total = ((performance.now() - began) / 1000).toFixed(1);
process.stdout.write(
  `bench:smoke: ${chosen.length - failed} of ${chosen.length} benches passed in ${total} s\n`,
);
process.exitCode = failed === 0 ? 0 : 1;
