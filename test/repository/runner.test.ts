// The test runner behind `npm test` and the focused runs (test/run.ts): given a path it runs
// that path's tests and no others, with the checkout's compile cache; an unknown path is
// refused by name, and `npm test` hands its arguments to it.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

const ROOT = join(import.meta.dirname, "..", "..");

function run(args: string[]) {
  // Without the parent runner's context, the nested run reports as a run of its own; without
  // a compile cache of the caller's, the runner picks its own.
  const { NODE_TEST_CONTEXT: _, NODE_COMPILE_CACHE: __, ...env } = process.env;
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: "utf8", env });
  const tests = /^ℹ tests (\d+)$/m.exec(r.stdout)?.[1];
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, tests: Number(tests) };
}

test("given a file, the runner runs that file's tests and no others", () => {
  const file = "test/common/uuid.test.ts";
  const alone = run(["--test", "--test-reporter=spec", file]);
  const focused = run(["test/run.ts", file, "--test-reporter=spec"]);
  assert.equal(focused.status, 0, focused.stderr);
  assert.ok(alone.tests > 0);
  assert.equal(focused.tests, alone.tests);
});

test("the files run with the checkout's compile cache", () => {
  const r = run(["test/run.ts", "test/fixtures/runner-env.ts", "--test-reporter=spec"]);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(
    r.stdout.includes(
      `compile cache: ${join(ROOT, "node_modules", ".cache", "skein-test-compile")}`,
    ),
    r.stdout,
  );
});

test("an unknown path is refused by name, before any test runs", () => {
  const r = run(["test/run.ts", "test/no-such-folder"]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /no such file or folder: test\/no-such-folder/);
});

test("npm test and the focused scripts end with the runner, so `npm test -- <path>` reaches it", () => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
  };
  assert.match(scripts.test!, /&& node test\/run\.ts$/);
  for (const name of ["test:unit", "test:workflow", "test:store", "test:idp", "test:ui"]) {
    assert.match(scripts[name]!, /^node test\/run\.ts\b/, name);
  }
});
