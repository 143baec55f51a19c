/**
 * `npm run bench:workflows-mcp`: the MCP endpoint of `skein serve` against its HTTP API in
 * the same run. A `skein serve` process (SQLite, MCP on) and a `skein worker module` process
 * serve a one-step no-op definition; one client, sequentially, starts a run and awaits its
 * end with one describe that waits (`wait_ms`), BENCH_CALLS times (default 200, after 20
 * warm-up pairs):
 *
 * - over HTTP: `POST /workflows/start`, then `POST /workflows/describe` with `wait_ms`;
 * - through MCP (the SDK's own client, Streamable HTTP): `workflow_start`, then
 *   `workflow_describe` with `wait_ms`. Each MCP request builds its server and transport
 *   (stateless) and calls the route in process with the caller's bearer.
 *
 * Figures: tool or HTTP calls per second (two per run), and p50 and p99 of each call in ms.
 * The describe includes the run's own execution (dispatch to the worker and back), which is
 * the same on both paths; the start is where the MCP overhead shows.
 */

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ACTIVITIES, spawnWorker, writeJson } from "../test/support/worker-endpoint.ts";
import {
  adminToken,
  call,
  startServe,
  tempDir,
  writeConfig,
} from "../test/workflow/support/server.ts";
import { type Figures, knob, percentile, runBench } from "./harness.ts";

const CALLS = knob("BENCH_CALLS", 200, 10);
const WARMUP = knob("BENCH_WARMUP", 20, 2);
/** The code these figures measure: a change there makes them stale (bench:report). */
const MEASURES = ["src/workflow/mcp", "src/workflow/http", "src/workflow/engine"];

const dir = await tempDir();
const server = await startServe(
  await writeConfig(dir.path, '[namespaces]\ndefault = "default"\n[mcp]\nenabled = true'),
);
const token = await adminToken(dir.path);
const registered = await call(server.url, "POST", "/workflows/definitions", {
  token,
  body: {
    definition:
      'name: bench\ntask_queue: q\nsteps:\n  - { id: s, call: { action: noop, input: "{}" } }\n',
  },
});
if (registered.status !== 200) throw new Error(JSON.stringify(registered.body));
const tokenFile = join(dir.path, "worker.token");
await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
const doc = await writeJson(dir.path, "worker.json", {
  name: "bench",
  task_queue: "q",
  actions: { noop: { module: ACTIVITIES, export: "noop" } },
});
const worker = spawnWorker(["module", doc, "--endpoint", server.grpc!, "--token-file", tokenFile]);

const mcp = new Client({ name: "bench", version: "0" });
await mcp.connect(
  new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  }),
);

interface Path {
  start(): Promise<string>;
  awaitEnd(workflowId: string): Promise<string>;
}

const http: Path = {
  async start() {
    const r = await call(server.url, "POST", "/workflows/start", {
      token,
      body: { name: "bench" },
    });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    return r.body.workflow_id;
  },
  async awaitEnd(workflowId) {
    const r = await call(server.url, "POST", "/workflows/describe", {
      token,
      body: { workflow_id: workflowId, wait_ms: 60_000 },
    });
    return r.body.run.status;
  },
};

// biome-ignore lint/suspicious/noExplicitAny: the bench reads two fields of the answers
async function tool(name: string, args: Record<string, unknown>): Promise<any> {
  const r = await mcp.callTool({ name, arguments: args });
  if (r.isError) throw new Error(JSON.stringify(r.content));
  return r.structuredContent;
}

const viaMcp: Path = {
  start: async () => (await tool("workflow_start", { name: "bench" })).workflow_id,
  awaitEnd: async (workflowId) =>
    (await tool("workflow_describe", { workflow_id: workflowId, wait_ms: 60_000 })).run.status,
};

async function measure(path: Path): Promise<Figures> {
  for (let i = 0; i < WARMUP; i++) await path.awaitEnd(await path.start());
  const starts: number[] = [];
  const waits: number[] = [];
  const began = performance.now();
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    const id = await path.start();
    const t1 = performance.now();
    const status = await path.awaitEnd(id);
    waits.push(performance.now() - t1);
    starts.push(t1 - t0);
    if (status !== "Completed") throw new Error(`run ${id} ended ${status}`);
  }
  const seconds = (performance.now() - began) / 1000;
  const ms = (values: number[], p: number) => Number(percentile(values, p).toFixed(2));
  return {
    calls_per_s: Math.round((2 * CALLS) / seconds),
    start_p50_ms: ms(starts, 50),
    start_p99_ms: ms(starts, 99),
    describe_wait_p50_ms: ms(waits, 50),
    describe_wait_p99_ms: ms(waits, 99),
  };
}

try {
  await runBench("workflows-mcp", { measures: MEASURES }, [
    { name: "HTTP: start + describe(wait_ms)", run: () => measure(http) },
    { name: "MCP: workflow_start + workflow_describe(wait_ms)", run: () => measure(viaMcp) },
  ]);
} finally {
  await mcp.close();
  worker.kill();
  await server.stop();
  await dir.remove();
}
