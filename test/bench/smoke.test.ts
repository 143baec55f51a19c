// `bench:smoke` on a project of its own: benches that write figures pass, one that says why
// it skipped passes with the reason, and one that prints only a header, reports only words,
// throws or hangs fails (the hanging one killed with everything it started). The benches
// here use the real harness, so what passes is what a real bench writes.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { until } from "../support/until.ts";

const SMOKE = fileURLToPath(new URL("../../bench/smoke.ts", import.meta.url));
const HARNESS = new URL("../../bench/harness.ts", import.meta.url).href;
const MEASURES = '{ measures: ["src/common"] }';

/** Bench sources by name; each becomes script `bench:NAME` of a fresh project. */
const BENCHES: Record<string, string> = {
  good: `import { runBench } from "${HARNESS}";
await runBench("good", ${MEASURES}, [{ name: "adds", run: () => ({ ops_per_s: 1234, note: "words too" }) }]);`,
  absent: `import { runBench, skipped } from "${HARNESS}";
await runBench("absent", ${MEASURES}, [{ name: "needs a service", run: () => skipped("the service is not installed") }]);`,
  header: `console.log("# header\\ncase  ops_per_s\\n----  ---------");`,
  words: `import { runBench } from "${HARNESS}";
await runBench("words", ${MEASURES}, [{ name: "talks", run: () => ({ verdict: "fast" }) }]);`,
  nan: `import { runBench } from "${HARNESS}";
await runBench("nan", ${MEASURES}, [{ name: "empty samples", run: () => ({ p50_ms: Number.NaN }) }]);`,
  throws: `throw new Error("the bench broke");`,
  hangs: `import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
writeFileSync(process.env.PIDS_FILE, JSON.stringify([process.pid, child.pid]));
setInterval(() => {}, 1000);`,
};

async function project(names: string[], extra: Record<string, string> = {}) {
  const dir = await mkdtemp(join(tmpdir(), "skein-smoke-test-"));
  const scripts: Record<string, string> = { ...extra };
  for (const name of names) {
    await writeFile(join(dir, `${name}.bench.ts`), BENCHES[name]!);
    scripts[`bench:${name}`] = `"${process.execPath}" ${name}.bench.ts`;
  }
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "p", scripts }));
  return dir;
}

function smoke(root: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  return new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(process.execPath, [SMOKE, "--root", root, ...args], {
      env: { ...process.env, ...env },
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.once("close", (code) => resolve({ code, out }));
  });
}

/** Whether `pid` is a process that has not ended (a zombie has ended). */
function alive(pid: number): boolean {
  try {
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

const line = (out: string, script: string) =>
  out.split("\n").find((l) => l.split(/\s+/)[1] === script) ?? "";

test("benches that write figures pass, a skip passes with its reason, tools are not run", async (t) => {
  const dir = await project(["good", "absent"], {
    "bench:smoke": "exit 3",
    "bench:report": "exit 3",
  });
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { code, out } = await smoke(dir);
  assert.equal(code, 0, out);
  assert.match(line(out, "bench:good"), /^ok .*good\.json: 1 cases measured, 1 figures/);
  assert.match(line(out, "bench:absent"), /^skipped /);
  assert.match(out, /skipped: needs a service: the service is not installed/);
  assert.doesNotMatch(out, /bench:smoke |bench:report /);
  assert.match(out, /2 of 2 benches passed/);
});

test("a script whose every command another script runs is left to that one", async (t) => {
  const dir = await project(["good", "absent"]);
  t.after(() => rm(dir, { recursive: true, force: true }));
  const pkg = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
  pkg.scripts["bench:both"] = `${pkg.scripts["bench:good"]} && ${pkg.scripts["bench:absent"]}`;
  await writeFile(join(dir, "package.json"), JSON.stringify(pkg));
  const { code, out } = await smoke(dir);
  assert.equal(code, 0, out);
  assert.match(out, /bench:good: run as part of bench:both/);
  assert.match(out, /bench:absent: run as part of bench:both/);
  assert.match(out, /1 of 1 benches passed/);
  // Named, it runs.
  const named = await smoke(dir, ["good"]);
  assert.match(line(named.out, "bench:good"), /^ok /);
});

for (const [name, reason] of [
  ["header", /wrote no results file \(no figure\)/],
  ["words", /case "talks" has no finite figure/],
  ["nan", /case "empty samples" has no finite figure/],
  ["throws", /exited with code 1[\s\S]*the bench broke/],
] as const) {
  test(`a bench that ${name === "throws" ? "throws" : `reports ${name} only`} fails the smoke run`, async (t) => {
    const dir = await project(["good", name]);
    t.after(() => rm(dir, { recursive: true, force: true }));
    const { code, out } = await smoke(dir);
    assert.equal(code, 1, out);
    assert.match(line(out, "bench:good"), /^ok /);
    assert.match(line(out, `bench:${name}`), /^failed /);
    assert.match(out, reason);
    assert.match(out, /1 of 2 benches passed/);
  });
}

test("a bench that outlives --timeout fails, and it and its children are killed", async (t) => {
  const dir = await project(["hangs"]);
  t.after(() => rm(dir, { recursive: true, force: true }));
  const pids = join(dir, "pids.json");
  const { code, out } = await smoke(dir, ["--timeout", "3"], { PIDS_FILE: pids });
  assert.equal(code, 1, out);
  assert.match(line(out, "bench:hangs"), /^failed .*timed out after 3 s/);
  // Killed processes linger as zombies until their new parent reaps them: wait for that.
  for (const pid of JSON.parse(await readFile(pids, "utf8")) as number[]) {
    await until(`process ${pid} to end`, () => !alive(pid));
  }
});

test("names choose scripts, and a name that is no bench script is refused", async (t) => {
  const dir = await project(["good", "throws"]);
  t.after(() => rm(dir, { recursive: true, force: true }));
  const chosen = await smoke(dir, ["good"]);
  assert.equal(chosen.code, 0, chosen.out);
  assert.match(chosen.out, /1 of 1 benches passed/);
  const unknown = await smoke(dir, ["nope"]);
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.out, /bench:nope is not a bench script of package\.json/);
});

test("at the smoke size, a bench run without a results directory never writes bench/results", async (t) => {
  const dir = await project(["good"]);
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(process.execPath, [join(dir, "good.bench.ts")], {
      env: { ...process.env, SKEIN_BENCH_SMOKE: "1", SKEIN_BENCH_RESULTS: "" },
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.once("close", (c) => resolve({ code: c, out }));
  });
  assert.equal(code, 0, out);
  const written = /results written to (\S+)/.exec(out)?.[1] ?? "";
  assert.ok(written.startsWith(tmpdir()), `wrote ${written}`);
  assert.ok(!written.includes(join("bench", "results")), `wrote ${written}`);
  const own = /^(.*\/skein-bench-smoke-[^/]+)\/good\.json$/.exec(written)?.[1];
  if (own !== undefined) await rm(own, { recursive: true, force: true });
});
