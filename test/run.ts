/**
 * The test runner behind `npm test` and the focused runs (`npm run test:workflow`, …,
 * `npm test -- <path>`): it turns the paths it is given (files, or folders searched for
 * `*.test.ts`; the whole `test/` folder when none) into one `node --test` run, so a focused
 * run and the full suite run the same way. Arguments starting with `--` go to `node --test`
 * as they are (`--test-name-pattern=…`, `--test-reporter=…`).
 *
 * Files run CONCURRENCY at a time, twice this machine's two cores: much of a file's time is
 * spent waiting on the real processes it starts (servers, workers, a browser) and on
 * deadlines it must let pass, not computing (at 2, the cores were busy about two thirds of
 * the run). The longest files start first, by the times test/support/file-times.ts keeps.
 */

import { spawn } from "node:child_process";
import { globSync, statSync } from "node:fs";
import { constants } from "node:os";
import { join, relative, resolve } from "node:path";
import { readTimes, TIMES_FILE_ENV } from "./support/file-times.ts";

const ROOT = join(import.meta.dirname, "..");
/** Each file's seconds in the last local run (written by test/support/file-times.ts). */
const LOCAL_TIMES = join(ROOT, "node_modules", ".cache", "skein-test-times.json");
/** The same, committed, for a fresh clone: refresh it by copying LOCAL_TIMES after a full run. */
const SEED_TIMES = join(ROOT, "test", "file-times.json");
// SKEIN_TEST_CONCURRENCY overrides it for a machine with more (or busier) cores.
const CONCURRENCY = Number(process.env.SKEIN_TEST_CONCURRENCY ?? 4);
const TIMEOUT_MS = 180_000;

function testFiles(path: string): string[] {
  const stat = statSync(join(ROOT, path), { throwIfNoEntry: false });
  if (stat === undefined) {
    process.stderr.write(`test/run.ts: no such file or folder: ${path}\n`);
    process.exit(2);
  }
  if (!stat.isDirectory()) return [path];
  return globSync("**/*.test.ts", { cwd: join(ROOT, path) }).map((file) => join(path, file));
}

const args = process.argv.slice(2);
const options = args.filter((arg) => arg.startsWith("--"));
// npm runs scripts from the package's folder; INIT_CWD is where `npm test` was typed.
const cwd = process.env.INIT_CWD ?? process.cwd();
const paths = args
  .filter((arg) => !arg.startsWith("--"))
  .map((arg) => relative(ROOT, resolve(cwd, arg)));
// The longest files first (times from the last local run, else the committed seed), files
// with no time before them (new, and maybe long): started last, a long file would finish
// alone while the other lanes sit idle. Ties keep name order.
const times = { ...readTimes(SEED_TIMES), ...readTimes(LOCAL_TIMES) };
const timeOf = (file: string) => times[file] ?? Number.POSITIVE_INFINITY;
const files = [...new Set((paths.length === 0 ? ["test"] : paths).flatMap(testFiles))]
  .sort()
  .sort((a, b) => timeOf(b) - timeOf(a));
if (files.length === 0) {
  process.stderr.write(`test/run.ts: no *.test.ts under ${paths.join(", ")}\n`);
  process.exit(2);
}
// Unless the caller chose reporters, the usual one and the one that keeps the files' times.
const reporters = options.some((o) => o.startsWith("--test-reporter"))
  ? []
  : [
      "--test-reporter=spec",
      "--test-reporter-destination=stdout",
      `--test-reporter=${join(ROOT, "test", "support", "file-times.ts")}`,
      "--test-reporter-destination=stderr",
    ];

// Every test file, server, worker and CLI the suite starts is a Node process loading much
// the same TypeScript; Node's compile cache keeps each module's stripped and compiled form
// on disk, so only the first process pays for it (a third less CPU for the CLI tests, even
// with an empty cache). NODE_COMPILE_CACHE set by the caller wins.
const env = {
  NODE_COMPILE_CACHE: join(ROOT, "node_modules", ".cache", "skein-test-compile"),
  [TIMES_FILE_ENV]: LOCAL_TIMES,
  ...process.env,
};

const child = spawn(
  process.execPath,
  [
    "--test",
    `--test-concurrency=${CONCURRENCY}`,
    `--test-timeout=${TIMEOUT_MS}`,
    ...reporters,
    ...options,
    ...files,
  ],
  { cwd: ROOT, stdio: "inherit", env },
);
// A Ctrl-C reaches the whole process group; the run ends with its own status.
process.on("SIGINT", () => {});
child.on("exit", (code, signal) =>
  process.exit(code ?? 128 + (signal === null ? 0 : constants.signals[signal])),
);
