/**
 * `npm run bench:mcp`: what MCP over HTTP costs against the store socket. One run starts the
 * real `skein-idp`, `skein-store serve` with `idp` and `skein-store mcp-http` as processes on
 * loopback and measures, with one client and eight, tool calls/s and p50/p99 latency of a
 * `document_get` and a small `document_put` through the SDK's own client → mcp-http → store,
 * beside `document.get` / `document.put` over the socket with the same pass in the same run.
 * Nothing is asserted.
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StoreClient } from "../src/store/client/client.ts";
import { type BenchCase, knob, percentile, runBench } from "./harness.ts";
import { storeProcesses } from "./support/store-processes.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = ["src/store/mcp", "src/store/transport", "src/store/idp"];

const CALLS_PER_CLIENT = knob("BENCH_CALLS", 500, 10);
const world = await storeProcesses("mcp");
const { pass, socketPath, mcpUrl: url } = world;

type Op = (caller: number, i: number) => Promise<unknown>;
interface Caller {
  get: Op;
  put: Op;
  close(): Promise<void>;
}

async function mcpCaller(): Promise<Caller> {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${pass}` } },
    }),
  );
  return {
    get: (c, i) =>
      client.callTool({
        name: "document_get",
        arguments: { collection: "c", key: `k${(i * 7 + c) % 1000}` },
      }),
    put: (c, i) =>
      client.callTool({
        name: "document_put",
        arguments: { collection: "c", key: `w${c}-${i % 50}`, value: { i } },
      }),
    close: () => client.close(),
  };
}

async function socketCaller(): Promise<Caller> {
  const client = await StoreClient.connect(socketPath, { pass });
  return {
    get: (c, i) => client.get("c", `k${(i * 7 + c) % 1000}`),
    put: (c, i) => client.put("c", [{ key: `w${c}-${i % 50}`, value: { i } }]),
    close: () => client.close(),
  };
}

async function measure(make: () => Promise<Caller>, op: "get" | "put", clients: number) {
  const callers = await Promise.all(Array.from({ length: clients }, make));
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    callers.map(async (caller, c) => {
      for (let i = 0; i < CALLS_PER_CLIENT; i++) {
        const t = performance.now();
        await caller[op](c, i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const caller of callers) await caller.close();
  return {
    perSecond: Math.round(latencies.length / seconds),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

const ms = (v: number) => Number(v.toFixed(3));
const cases: BenchCase[] = [];
for (const clients of [1, 8]) {
  for (const op of ["get", "put"] as const) {
    cases.push({
      name: `document_${op}, ${clients} client(s), ${CALLS_PER_CLIENT} calls each: socket and mcp`,
      async run() {
        await measure(socketCaller, op, clients);
        await measure(mcpCaller, op, clients);
        const socket = await measure(socketCaller, op, clients);
        const mcp = await measure(mcpCaller, op, clients);
        return {
          socket_calls_per_s: socket.perSecond,
          socket_p50_ms: ms(socket.p50),
          socket_p99_ms: ms(socket.p99),
          mcp_calls_per_s: mcp.perSecond,
          mcp_p50_ms: ms(mcp.p50),
          mcp_p99_ms: ms(mcp.p99),
          mcp_added_p50_ms: ms(mcp.p50 - socket.p50),
        };
      },
    });
  }
}
await runBench("mcp", { measures: MEASURES }, cases);
// Stop the processes cleanly (a profile run, BENCH_PROF=DIR, writes their CPU profiles then).
await world.stop();
process.exit(0);
