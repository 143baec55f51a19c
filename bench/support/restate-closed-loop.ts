/**
 * The closed loop of `bench:workflows-server` run against Restate, for the side-by-side
 * figures of docs/engine.md: W invocations of a handler that makes M no-op `ctx.run` steps
 * (each a journaled, durable step, as each of Skein's activities is a durable event), C in
 * flight, each lane calling the ingress and awaiting the invocation's end before the next.
 * The restate-server (two partitions, its defaults otherwise: RocksDB with its WAL synced)
 * and a Node.js service endpoint run as processes of their own; the figures are steps/s and
 * the CPU per step of the server, the endpoint and this client.
 *
 * Restate is not a dependency of Skein: install it into a directory of its own and name
 * that directory,
 *
 *   mkdir /tmp/restate && cd /tmp/restate && npm init -y &&
 *     npm install @restatedev/restate-server@1.7 @restatedev/restate-sdk
 *   SKEIN_BENCH_RESTATE_DIR=/tmp/restate node bench/support/restate-closed-loop.ts
 *
 * Knobs as in bench:workflows-server: BENCH_WORKFLOWS (10000), BENCH_STEPS (10),
 * BENCH_WARMUP (500); BENCH_RESTATE_PARTITIONS (2); C is 64.
 */

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { formatTable, knob } from "../harness.ts";
import { JsonClient } from "./http-client.ts";
import { processCpuSeconds } from "./process-cpu.ts";

const DIR = process.env.SKEIN_BENCH_RESTATE_DIR;
if (DIR === undefined || DIR === "") {
  process.stderr.write(
    "SKEIN_BENCH_RESTATE_DIR must name a directory with @restatedev/restate-server and " +
      "@restatedev/restate-sdk installed (see this file's head)\n",
  );
  process.exit(2);
}
const W = knob("BENCH_WORKFLOWS", 10_000, 50);
const M = knob("BENCH_STEPS", 10, 3);
const WARMUP = knob("BENCH_WARMUP", 500, 10);
const PARTITIONS = knob("BENCH_RESTATE_PARTITIONS", 2, 2);
const C = 64;
const INGRESS = "http://127.0.0.1:8080";
const ADMIN = "http://127.0.0.1:9070";

const ENDPOINT = `import * as restate from "@restatedev/restate-sdk";
const bench = restate.service({
  name: "bench",
  handlers: {
    async run(ctx, steps) {
      for (let i = 0; i < steps; i++) await ctx.run("step", async () => null);
      return steps;
    },
  },
});
restate.serve({ services: [bench], port: 9080 });
`;

async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (await ok().catch(() => false)) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`${what}: not ready within 60 s`);
}

/** The same client as Skein's closed loop (http-client.ts), a socket per lane. */
const client = new JsonClient(INGRESS, 128);

async function invoke(steps: number): Promise<void> {
  const r = await client.post("/bench/run", steps);
  if (r.status !== 200) throw new Error(`invocation: ${r.status} ${JSON.stringify(r.body)}`);
}

async function closedLoop(total: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(C, total) }, async () => {
      while (next < total) {
        next++;
        await invoke(M);
      }
    }),
  );
}

const base = mkdtempSync(join(tmpdir(), "skein-restate-"));
const endpointFile = join(DIR, "skein-bench-endpoint.mjs");
writeFileSync(endpointFile, ENDPOINT);
// The platform package's binary itself (node_modules/.bin's wrapper would be a process
// between, and its child's CPU would not be counted).
const BINARY = join(
  DIR,
  `node_modules/@restatedev/restate-server-linux-${process.arch}/bin/restate-server`,
);
const server = spawn(BINARY, ["--no-logo"], {
  cwd: base,
  env: {
    ...process.env,
    RESTATE_DEFAULT_NUM_PARTITIONS: String(PARTITIONS),
    RESTATE_LOG_FILTER: "error",
    // No calls out (an update check that fails on a closed network).
    RESTATE_DISABLE_TELEMETRY: "true",
  },
  stdio: ["ignore", "ignore", "inherit"],
});
const endpoint = spawn(process.execPath, [endpointFile], {
  cwd: DIR,
  stdio: ["ignore", "ignore", "inherit"],
});
try {
  await until("restate admin", async () => (await fetch(`${ADMIN}/health`)).ok);
  await until(
    "deployment",
    async () =>
      (
        await fetch(`${ADMIN}/deployments`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ uri: "http://127.0.0.1:9080" }),
        })
      ).ok,
  );
  await until("first invocation", () => invoke(1).then(() => true));
  await closedLoop(WARMUP);
  const load = loadavg().map((l) => l.toFixed(2));
  const before = {
    server: processCpuSeconds(server.pid!),
    endpoint: processCpuSeconds(endpoint.pid!),
  };
  const client = process.cpuUsage();
  const start = performance.now();
  await closedLoop(W);
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(client);
  const steps = W * M;
  const perStep = (s: number) => Number(((s * 1e6) / steps).toFixed(1));
  process.stdout.write(
    `${formatTable(`restate closed loop (Restate 1.7, ${PARTITIONS} partitions)`, [
      {
        case: `closed loop: W = ${W}, M = ${M}, C = ${C}`,
        figures: {
          steps_per_s: Math.round(steps / seconds),
          server_us_per_step: perStep(processCpuSeconds(server.pid!) - before.server),
          endpoint_us_per_step: perStep(processCpuSeconds(endpoint.pid!) - before.endpoint),
          client_us_per_step: perStep((used.user + used.system) / 1e6),
        },
      },
    ])}\nload at the start ${load.join(" ")}\n`,
  );
} finally {
  client.close();
  server.kill("SIGTERM");
  endpoint.kill("SIGTERM");
  await Promise.all(
    [server, endpoint].map((child) => new Promise((done) => child.once("exit", done))),
  );
  rmSync(base, { recursive: true, force: true });
  rmSync(endpointFile, { force: true });
}
