/**
 * `npm run bench:mcp`: what MCP over HTTP costs against the store socket. One run starts the
 * real `skein-idp`, `skein-store serve` with `idp` and `skein-store mcp-http` as processes on
 * loopback and measures, with one client and eight, tool calls/s and p50/p99 latency of a
 * `document_get` and a small `document_put` through the SDK's own client → mcp-http → store,
 * beside `document.get` / `document.put` over the socket with the same pass in the same run.
 * Nothing is asserted.
 */

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StoreClient } from "../src/store/client/client.ts";
import { type BenchCase, knob, percentile, runBench } from "./harness.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = ["src/store/mcp", "src/store/transport", "src/store/idp"];

const CALLS_PER_CLIENT = knob("BENCH_CALLS", 500, 10);
const DATABASE = "bench";
const IDP_BIN = fileURLToPath(new URL("../bin/skein-idp.ts", import.meta.url));
const STORE_BIN = fileURLToPath(new URL("../bin/skein-store.ts", import.meta.url));

const root = mkdtempSync(join(tmpdir(), "skein-bench-mcp-"));
const children: ChildProcess[] = [];
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});
const run = join(root, "run");
mkdirSync(run);
chmodSync(run, 0o700);
const env = {
  ...process.env,
  XDG_RUNTIME_DIR: run,
  SKEIN_LOG_LEVEL: "info",
  ...(process.env.BENCH_PROF
    ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROF}` }
    : {}),
};

/** Spawns `args` and resolves with the first stream text matching `ready`. */
function spawnUntil(args: string[], ready: RegExp): Promise<RegExpExecArray> {
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let text = "";
  return new Promise((resolve, reject) => {
    const look = (d: Buffer) => {
      text += String(d);
      const match = ready.exec(text);
      if (match !== null) resolve(match);
    };
    child.stdout!.on("data", look);
    child.stderr!.on("data", look);
    child.once("exit", (code) => reject(new Error(`${args[1]} exited ${code}: ${text}`)));
  });
}

const idpDir = join(root, "idp");
const idpCli = (...args: string[]) => {
  const sub = ["client", "user", "group"].includes(args[0]!) ? 2 : 1;
  const argv = [...args.slice(0, sub), "--data-dir", idpDir, ...args.slice(sub)];
  const r = spawnSync(process.execPath, [IDP_BIN, ...argv], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim();
};
const issuer = (
  await spawnUntil(
    [IDP_BIN, "serve", "--data-dir", idpDir, "--listen", "127.0.0.1:0"],
    /"issuer":"([^"]+)"/,
  )
)[1]!;
const secret = idpCli("client", "add", "agent");
idpCli("grant", "--subject", "client:agent", "--action", "admin", "--resource", `db/${DATABASE}`);
const token = await fetch(new URL("/token", issuer), {
  method: "POST",
  headers: {
    authorization: `Basic ${Buffer.from(`agent:${secret}`).toString("base64")}`,
    "content-type": "application/x-www-form-urlencoded",
  },
  body: `grant_type=client_credentials&resource=urn:skein:store:${DATABASE}`,
});
const pass = ((await token.json()) as { access_token: string }).access_token;

const service = {
  data_dir: join(root, "store"),
  branch_cache_bytes_per_shard: 8 << 20,
  max_frame: 1 << 20,
  max_clients: 64,
  max_page: 100,
  timeout_ms: 30_000,
  create: { shards: 4, cache_bytes_total: 64 << 20, executor_threads: 1 },
  idp: { issuer, database: DATABASE },
  mcp_http: { listen: "127.0.0.1:0", allowed_origins: [] },
};
const file = join(root, "service.json");
writeFileSync(file, JSON.stringify(service));
await spawnUntil([STORE_BIN, "serve", file, "--create"], /store listening/);
const port = (await spawnUntil([STORE_BIN, "mcp-http", file], /"port":(\d+)[^\n]*listening/))[1];
const url = new URL(`http://127.0.0.1:${port}/mcp`);
const socketPath = join(run, "skein-store", "store.sock");

const setup = await StoreClient.connect(socketPath, { pass });
await setup.call("collections.create", { collection: "c" });
await setup.put(
  "c",
  Array.from({ length: 1_000 }, (_, i) => ({ key: `k${i}`, value: { i, text: "modest" } })),
);
await setup.close();

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
await Promise.all(
  children.map(
    (c) =>
      new Promise((resolve) => {
        if (c.exitCode !== null) return resolve(null);
        c.once("exit", resolve);
        c.kill("SIGTERM");
      }),
  ),
);
process.exit(0);
