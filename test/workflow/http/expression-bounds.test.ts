// A definition whose output never terminates cannot take the real server down: the run fails
// `expression_failed`, `/health` answers during and after, and the server comes back after a
// SIGKILL, both when the failure was recorded before the kill and when the evaluation first
// happens in recovery. Every request here has its own timeout, so a pinned event loop fails
// the test instead of hanging it.

import assert from "node:assert/strict";
import { test } from "node:test";
import { until } from "../../support/until.ts";
import {
  adminToken,
  type ServerProcess,
  startServe,
  tempDir,
  writeConfig,
} from "../support/server.ts";

/** The expression: tail recursion JSONata runs as an endless trampoline. */
const SPIN = "($f := function($x){ $f($x) }; $f(1))";
const definition = (name: string, sleepMs: number) =>
  `name: ${name}\nsteps:\n  - { id: nap, sleep: { duration_ms: ${sleepMs} } }\noutput: ${JSON.stringify(SPIN)}\n`;

/** One request that must answer within 10 s, however busy the server is. */
async function ask(server: ServerProcess, path: string, token?: string, body?: object) {
  const response = await fetch(`${server.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  // biome-ignore lint/suspicious/noExplicitAny: each call asserts the shape it reads
  return { status: response.status, body: (await response.json()) as any };
}

const healthy = async (server: ServerProcess) =>
  assert.equal((await ask(server, "/health")).status, 200);

async function failedRun(server: ServerProcess, token: string, workflowId: string) {
  const run = await until(`${workflowId} to end`, async () => {
    await healthy(server);
    const r = await ask(server, "/workflows/describe", token, { workflow_id: workflowId });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.run.status === "Running" ? undefined : r.body.run;
  });
  assert.equal(run.status, "Failed");
  assert.equal(run.failure.code, "expression_failed");
  assert.match(run.failure.message, /^output: .*time limit/);
  return run;
}

test("an endless output expression fails the run; the server serves on, across SIGKILLs", async (t) => {
  const dir = await tempDir();
  t.after(dir.remove);
  const config = await writeConfig(dir.path, '[namespaces]\ndefault = "default"');
  let server = await startServe(config);
  t.after(() => server.stop("SIGKILL"));
  const token = await adminToken(dir.path);
  const restart = async () => {
    await server.stop("SIGKILL");
    server = await startServe(config);
    await healthy(server);
  };
  for (const [name, ms] of [
    ["spin", 1],
    ["spin-later", 1500],
  ] as const) {
    const r = await ask(server, "/workflows/definitions", token, {
      definition: definition(name, ms),
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }

  // Fails while the server runs; the failure is durable across a SIGKILL.
  const spin = await ask(server, "/workflows/start", token, { name: "spin" });
  assert.equal(spin.status, 200, JSON.stringify(spin.body));
  await failedRun(server, token, spin.body.workflow_id);
  await restart();
  await failedRun(server, token, spin.body.workflow_id);

  // Killed before its timer fires: the first evaluation happens in recovery, and is bounded.
  const later = await ask(server, "/workflows/start", token, { name: "spin-later" });
  assert.equal(later.status, 200, JSON.stringify(later.body));
  await restart();
  await failedRun(server, token, later.body.workflow_id);
  await restart();
  await failedRun(server, token, later.body.workflow_id);
});
