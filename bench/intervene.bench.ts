/**
 * `npm run bench:intervene`: intervention round-trip latency through the real pieces. A
 * `skein serve` process (SQLite), one `skein worker agent` process holding the agent
 * transport, and the scripted model server (in this process) whose one reply never comes
 * in time, so the attempt stays live. Each sample is one `POST /workflows/intervene`
 * (PauseResume, alternating) from request to the HTTP answer: HTTP, auth, decoding, the
 * hub, the WebSocket to the worker, the worker applying it and recording it in the
 * transcript, the answer back. Sequential (one in flight) and concurrent (BENCH_CONCURRENCY
 * in flight) cases.
 *
 * Knobs: BENCH_INTERVENTIONS (2000), BENCH_CONCURRENCY (16).
 */

import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startScriptedModel } from "../src/testing/scripted-model.ts";
import {
  call,
  SKEIN_BIN,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../test/workflow/support/server.ts";
import { knob, percentile, runBench } from "./harness.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = [
  "src/workflow/agents",
  "src/worker/kinds/agent",
  "src/protocol",
  "src/workflow/http",
];

const N = knob("BENCH_INTERVENTIONS", 2000, 20);
const C = knob("BENCH_CONCURRENCY", 16, 4);
const WARMUP = knob("BENCH_WARMUP", 100, 5);

const dir = await tempDir();
const model = await startScriptedModel([{ content: "never", delay_ms: 3_600_000 }]);
const server = await startServe(await writeConfig(dir.path, '[namespaces]\ndefault = "default"'));
const token = await tokenFor(dir.path, { subject: "bench", namespaces: "*", worker: true });
const api = (path: string, body: object) => call(server.url, "POST", path, { token, body });
await api("/workflows/definitions", {
  definition:
    "name: ask\ntask_queue: agents\nsteps:\n  - { id: a, call: { action: assistant, input: input.q } }\n",
});
const tokenFile = join(dir.path, "worker.token");
await writeFile(tokenFile, `${token}\n`);
const doc = join(dir.path, "agents.json");
await writeFile(
  doc,
  JSON.stringify({
    name: "agents",
    task_queue: "agents",
    actions: { assistant: { agent: { base_url: model.url, model: "scripted" } } },
  }),
);
const worker = spawn(
  process.execPath,
  [SKEIN_BIN, "worker", "agent", doc, "--endpoint", server.grpc!, "--token-file", tokenFile],
  { stdio: "ignore", env: { ...process.env, SKEIN_LOG_LEVEL: "warn" } },
);

const started = await api("/workflows/start", { name: "ask", input: { q: "hi" } });
const workflowId = started.body.workflow_id as string;
let attempt:
  | { run_id: string; activity_id: number; attempt: number; capabilities: string[] }
  | undefined;
while (attempt === undefined || attempt.capabilities.length < 2) {
  await new Promise((done) => setTimeout(done, 20));
  attempt = (await api("/workflows/attempts", { workflow_id: workflowId })).body.attempts[0];
}
const target = {
  workflow_id: workflowId,
  run_id: attempt.run_id,
  activity_id: attempt.activity_id,
  attempt: attempt.attempt,
};

let toggle = false;
async function once(): Promise<number> {
  toggle = !toggle;
  const t0 = performance.now();
  const r = await api("/workflows/intervene", {
    ...target,
    kind: { kind: "PauseResume", paused: toggle },
  });
  if (r.body?.outcome?.outcome !== "Applied") throw new Error(JSON.stringify(r.body));
  return performance.now() - t0;
}

async function measure(concurrency: number) {
  const samples: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < N) samples.push(await once());
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return {
    interventions: samples.length,
    per_s: Math.round(samples.length / seconds),
    p50_ms: Number(percentile(samples, 50).toFixed(2)),
    p99_ms: Number(percentile(samples, 99).toFixed(2)),
  };
}

try {
  for (let i = 0; i < WARMUP; i++) await once();
  await runBench("intervene", { measures: MEASURES }, [
    { name: "sequential (1 in flight)", run: () => measure(1) },
    { name: `concurrent (${C} in flight)`, run: () => measure(C) },
  ]);
} finally {
  await api("/workflows/cancel", { workflow_id: workflowId });
  worker.kill();
  await server.stop();
  await model.close();
  await dir.remove();
}
