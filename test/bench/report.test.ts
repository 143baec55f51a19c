// `bench:report` on a git repository of its own: it rewrites only the marked blocks, shows
// each figure with its date, load and commit, flags a figure whose measured code changed
// after its commit (and not one whose unrelated code changed), says when the commit is
// unknown, names a bench script without results, and refuses smoke results.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";

const REPORT = fileURLToPath(new URL("../../bench/report.ts", import.meta.url));

const README = `# P

Intro.

<!-- bench-report:begin -->
old figures
<!-- bench-report:end -->

Outro.
`;

const DOC = `# Doc

<!-- bench-report:begin b -->
<!-- bench-report:end -->
`;

async function repo(t: TestContext) {
  const dir = await mkdtemp(join(tmpdir(), "skein-report-test-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
      cwd: dir,
      encoding: "utf8",
    }).trim();
  const write = async (path: string, text: string) => {
    await mkdir(join(dir, path, ".."), { recursive: true });
    await writeFile(join(dir, path), text);
  };
  git("init", "-q");
  await write(
    "package.json",
    JSON.stringify({
      scripts: {
        "bench:a": "node bench/a.bench.ts",
        "bench:b": "node bench/b.bench.ts",
        "bench:c": "node bench/c.bench.ts",
        "bench:ab": "node bench/a.bench.ts && node bench/c.bench.ts",
        "bench:c-alone": "node bench/c.bench.ts",
        "bench:report": "node bench/report.ts",
      },
    }),
  );
  await write("README.md", README);
  await write("docs/page.md", DOC);
  await write("src/a/x.ts", "export const x = 1;\n");
  await write("src/b/y.ts", "export const y = 1;\n");
  await write("bench/results/.keep", "");
  git("add", "-A");
  git("commit", "-q", "-m", "one");
  return { dir, git, write, head: () => git("rev-parse", "HEAD") };
}

function result(name: string, commit: string | null, extra: object = {}) {
  return JSON.stringify({
    name,
    smoke: false,
    at: "2026-03-04T05:06:07.000Z",
    loadavg: [1.5, 2, 2.25],
    commit,
    dirty: false,
    measures: [`bench/${name}.bench.ts`, `src/${name}`],
    knobs: { BENCH_N: 1000 },
    rows: [{ case: `case of ${name}`, figures: { ops_per_s: 12345, p50_ms: 0.1234, note: "x" } }],
    ...extra,
  });
}

function report(dir: string) {
  return spawnSync(process.execPath, [REPORT, "--root", dir], { encoding: "utf8" });
}

test("the block gets each figure with date, load and commit; the rest of the page stays", async (t) => {
  const r = await repo(t);
  await r.write("bench/results/a.json", result("a", r.head()));
  const run = report(r.dir);
  assert.equal(run.status, 0, run.stderr);
  const readme = await readFile(join(r.dir, "README.md"), "utf8");
  assert.ok(readme.startsWith("# P\n\nIntro.\n\n<!-- bench-report:begin -->\n"));
  assert.ok(readme.endsWith("<!-- bench-report:end -->\n\nOutro.\n"));
  assert.doesNotMatch(readme, /old figures/);
  const short = r.head().slice(0, 7);
  assert.match(
    readme,
    new RegExp(
      `- \`bench:a\` \\(a\\): 2026-03-04, load 1.5 / 2 / 2.25, commit \`${short}\`; sizes BENCH_N=1,000\\.`,
    ),
  );
  assert.match(readme, / {2}- case of a: ops_per_s 12,345 · p50_ms 0\.123 · note x/);
  assert.doesNotMatch(readme, /Stale/);
  assert.match(readme, /- `bench:b`: no results recorded yet\./);
  assert.doesNotMatch(readme, /bench:report/);
});

test("a figure whose measured code changed after its commit is flagged stale; other changes are not", async (t) => {
  const r = await repo(t);
  const measured = r.head();
  await r.write("bench/results/a.json", result("a", measured));
  await r.write("bench/results/b.json", result("b", measured));
  await r.write("src/a/x.ts", "export const x = 2;\n");
  r.git("commit", "-q", "-am", "change a");
  const run = report(r.dir);
  assert.equal(run.status, 0, run.stderr);
  const readme = await readFile(join(r.dir, "README.md"), "utf8");
  const [aPart, bPart] = readme.split("- `bench:b`");
  assert.match(
    aPart!,
    /\*\*Stale\*\*: the measured code changed since \(last in [0-9a-f]+ \d{4}-\d\d-\d\d: `src\/a\/x\.ts`\)/,
  );
  assert.doesNotMatch(bPart!, /Stale/);
  // Measured again at the new commit: current.
  await r.write("bench/results/a.json", result("a", r.head()));
  assert.equal(report(r.dir).status, 0);
  assert.doesNotMatch(await readFile(join(r.dir, "README.md"), "utf8"), /Stale/);
});

test("carried figures say where from and that the commit is unknown; a docs block takes only its names", async (t) => {
  const r = await repo(t);
  await r.write(
    "bench/results/b.json",
    result("b", null, { loadavg: null, carried: "README.md of the fifth session" }),
  );
  await r.write("bench/results/a.json", result("a", "f".repeat(40)));
  const run = report(r.dir);
  assert.equal(run.status, 0, run.stderr);
  const readme = await readFile(join(r.dir, "README.md"), "utf8");
  assert.match(
    readme,
    /- `bench:b` \(b\): 2026-03-04, load not recorded, commit unknown, carried from README\.md of the fifth session; sizes BENCH_N=1,000\.\n {2}Cannot tell whether the code changed since: the commit was not recorded\./,
  );
  assert.match(readme, /the commit is not in this history/);
  const doc = await readFile(join(r.dir, "docs/page.md"), "utf8");
  assert.match(doc, /bench:b/);
  assert.doesNotMatch(doc, /bench:a/);
});

test("smoke results and a README without a block are refused", async (t) => {
  const r = await repo(t);
  await r.write("bench/results/a.json", result("a", r.head(), { smoke: true }));
  const smoke = report(r.dir);
  assert.notEqual(smoke.status, 0);
  assert.match(smoke.stderr, /bench\/results\/a\.json holds smoke-size figures/);
  await r.write("bench/results/a.json", result("a", r.head()));
  await r.write("README.md", "# P\n");
  const bare = report(r.dir);
  assert.notEqual(bare.status, 0);
  assert.match(bare.stderr, /README\.md has no <!-- bench-report:begin -->/);
});

test("a bench file run by two scripts is reported once, under the first", async (t) => {
  const r = await repo(t);
  await r.write("bench/results/c.json", result("c", r.head()));
  const run = report(r.dir);
  assert.equal(run.status, 0, run.stderr);
  const readme = await readFile(join(r.dir, "README.md"), "utf8");
  assert.equal(readme.match(/case of c/g)?.length, 1);
  assert.match(readme, /- `bench:c` \(c\): 2026-03-04/);
  assert.doesNotMatch(readme, /bench:c-alone/);
  // `bench:ab` still runs a file of its own (a), so it keeps its entry.
  assert.match(readme, /- `bench:ab`: no results recorded yet\./);
});
