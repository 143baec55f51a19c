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
 * the run).
 */

import { spawn } from "node:child_process";
import { globSync, statSync } from "node:fs";
import { constants } from "node:os";
import { join, relative, resolve } from "node:path";

const ROOT = join(import.meta.dirname, "..");
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
const files = [...new Set((paths.length === 0 ? ["test"] : paths).flatMap(testFiles))].sort();
if (files.length === 0) {
  process.stderr.write(`test/run.ts: no *.test.ts under ${paths.join(", ")}\n`);
  process.exit(2);
}

// Every test file, server, worker and CLI the suite starts is a Node process loading much
// the same TypeScript; Node's compile cache keeps each module's stripped and compiled form
// on disk, so only the first process pays for it (a third less CPU for the CLI tests, even
// with an empty cache). NODE_COMPILE_CACHE set by the caller wins.
const env = {
  NODE_COMPILE_CACHE: join(ROOT, "node_modules", ".cache", "skein-test-compile"),
  ...process.env,
};

const child = spawn(
  process.execPath,
  [
    "--test",
    `--test-concurrency=${CONCURRENCY}`,
    `--test-timeout=${TIMEOUT_MS}`,
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
