// A deployment-launched worker outlives a SIGKILLed supervisor only briefly: it notices that
// its parent is gone and stops, so the next server start does not leave two copies serving.
// A worker started by hand (no SKEIN_DEPLOYMENT) is not tied to its parent.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type TestContext, test } from "node:test";
import { until } from "../support/until.ts";
import { ACTIVITIES, writeJson } from "../support/worker-endpoint.ts";
import { SKEIN_BIN } from "../workflow/support/server.ts";

// The parent: launches the worker (its log to a file, which outlives the parent), prints its
// pid, then waits to be killed.
const PARENT = `
const { spawn } = require("node:child_process");
const { openSync } = require("node:fs");
const [bin, doc, deployment, log, npm] = process.argv.slice(1);
const env = { ...process.env };
if (deployment) {
  env.SKEIN_DEPLOYMENT = deployment;
  env.SKEIN_SUPERVISOR_PID = String(process.pid);
} else if (npm) {
  // Started through npx or npm exec: npm sets npm_execpath.
  delete env.SKEIN_DEPLOYMENT;
  env.npm_execpath = npm;
} else {
  // Started by hand from a shell: neither a deployment nor under npm (npm_execpath, which
  // \`npm test\` passes down, would make the worker stop with its launcher: watchLauncher).
  delete env.SKEIN_DEPLOYMENT;
  delete env.npm_execpath;
}
const child = spawn(process.execPath, [bin, "worker", "module", doc, "--endpoint", "127.0.0.1:1",
  "--reconnect-initial-backoff", "0.05", "--reconnect-max-backoff", "0.2"],
  { env, stdio: ["ignore", "ignore", openSync(log, "w")] });
console.log(child.pid);
setInterval(() => {}, 1000);
`;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function launch(
  doc: string,
  deployment: string,
  npm = "",
): Promise<{ parent: number; worker: number; log: string }> {
  const log = join(dirname(doc), `worker-${deployment || (npm ? "npm" : "by-hand")}.log`);
  const parent = spawn(process.execPath, ["-e", PARENT, SKEIN_BIN, doc, deployment, log, npm], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const worker = await new Promise<number>((resolve) => {
    parent.stdout!.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
  });
  return { parent: parent.pid!, worker, log };
}

/** The worker has started (its parent watch with it) and logs its first failed connect. */
function reconnecting(worker: { log: string }): Promise<boolean> {
  return until("the worker's reconnect loop", async () =>
    (await readFile(worker.log, "utf8").catch(() => "")).includes("cannot reach the server"),
  );
}

/** A worker document in a directory removed when the test ends. */
async function workerDoc(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "skein-parent-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return writeJson(dir, "worker.json", {
    name: "w",
    task_queue: "q",
    actions: { inc: { module: ACTIVITIES, export: "inc" } },
  });
}

async function gone(pid: number, withinMs: number): Promise<boolean> {
  const end = Date.now() + withinMs;
  while (Date.now() < end) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !alive(pid);
}

test("a supervised worker stops when its supervisor is SIGKILLed; a hand-started one does not", async (t) => {
  const doc = await workerDoc(t);

  const supervised = await launch(doc, "alpha@1");
  const byHand = await launch(doc, "");
  t.after(() => {
    for (const pid of [supervised.worker, byHand.worker])
      if (alive(pid)) process.kill(pid, "SIGKILL");
  });
  // Both workers have started and entered their reconnect loops.
  await reconnecting(supervised);
  await reconnecting(byHand);
  assert.ok(alive(supervised.worker) && alive(byHand.worker), "both workers run");

  process.kill(supervised.parent, "SIGKILL");
  process.kill(byHand.parent, "SIGKILL");
  assert.equal(await gone(supervised.worker, 10_000), true, "the supervised worker stopped");
  assert.equal(alive(byHand.worker), true, "the hand-started worker keeps running");
});

test("a worker started under npm stops when its launcher dies, and says why on stderr", async (t) => {
  const doc = await workerDoc(t);
  const worker = await launch(doc, "", "/usr/lib/node_modules/npm/bin/npm-cli.js");
  t.after(() => {
    if (alive(worker.worker)) process.kill(worker.worker, "SIGKILL");
  });
  await reconnecting(worker);
  process.kill(worker.parent, "SIGKILL");
  assert.equal(await gone(worker.worker, 10_000), true, "the worker stopped with its launcher");
  assert.match(await readFile(worker.log, "utf8"), /^skein: launcher gone \(npm\); stopping$/m);
});

test("a supervised worker whose supervisor died before it started watching stops at once", {
  timeout: 20_000,
}, async (t) => {
  const doc = await workerDoc(t);
  // Its parent (this test) is not the supervisor it was told of: that one is gone.
  const worker = spawn(
    process.execPath,
    [SKEIN_BIN, "worker", "module", doc, "--endpoint", "127.0.0.1:1"],
    {
      env: { ...process.env, SKEIN_DEPLOYMENT: "alpha@1", SKEIN_SUPERVISOR_PID: "999999999" },
      stdio: "ignore",
    },
  );
  t.after(() => worker.kill("SIGKILL"));
  const code = await new Promise<number | null>((resolve) => worker.once("exit", resolve));
  assert.equal(code, 0, "it stopped as on SIGTERM");
});
