/**
 * `npm run bench:agent-mcp`: what a store tool call costs an agent. One run starts the real
 * `skein-idp`, `skein-store serve` with `idp`, `skein-store mcp-http`, `skein serve` and a
 * `skein worker agent` whose action names the store's MCP endpoint (pass by client
 * credentials, calls pinned to a branch), with the scripted model in this process. An attempt
 * whose model asks for N `store_document_get` calls, one per turn, is timed turn by turn (the
 * model sees each request arrive); so is an attempt whose N calls name no tool (answered by
 * the worker without a request): the difference of the two p50 turn times is what one MCP
 * call adds through the worker → mcp-http → store. Beside it, in the same run: `document.get`
 * over the socket with the same kind of pass, and through mcp-http with the SDK's client.
 * Nothing is asserted.
 */

import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StoreClient } from "../src/store/client/client.ts";
import { type ScriptedReply, startScriptedModel } from "../src/testing/scripted-model.ts";
import { type BenchCase, knob, percentile, runBench } from "./harness.ts";
import { bin, DATABASE, storeProcesses } from "./support/store-processes.ts";

const CALLS = knob("BENCH_CALLS", 200, 10);
const WARMUP = knob("BENCH_WARMUP", 20, 2);
/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = ["src/worker/kinds/agent", "src/store/mcp", "src/store/transport"];
const world = await storeProcesses("agent-mcp");
const { root, env, children, spawnUntil, issuer, pass, socketPath, mcpUrl } = world;
const secretFile = join(root, "agent.secret");
writeFileSync(secretFile, `${world.secret}\n`, { mode: 0o600 });

// The workflow server, the model and the agent worker.
const skeinDir = join(root, "skein");
mkdirSync(skeinDir);
const config = join(skeinDir, "skein.toml");
writeFileSync(config, 'data_dir = "data"\n[namespaces]\ndefault = "default"\n');
const listening = await spawnUntil(
  [
    bin("skein"),
    "serve",
    "--config",
    config,
    "--listen",
    "127.0.0.1:0",
    "--grpc-listen",
    "127.0.0.1:0",
  ],
  /listening on (http:\/\/\S+)[\s\S]*worker endpoint on (\S+)|worker endpoint on (\S+)[\s\S]*listening on (http:\/\/\S+)/,
);
const httpUrl = listening[1] ?? listening[4]!;
const grpc = listening[2] ?? listening[3]!;
const tokenFile = join(skeinDir, "data", "admin.token");
const token = readFileSync(tokenFile, "utf8").trim();
const model = await startScriptedModel();
const doc = join(root, "agents.json");
writeFileSync(
  doc,
  JSON.stringify({
    name: "bench-agents",
    task_queue: "agents",
    actions: {
      writer: {
        agent: {
          base_url: model.url,
          model: "scripted",
          max_turns: 10_000,
          mcp: {
            store: {
              url: mcpUrl.href,
              auth: {
                client_credentials: {
                  issuer,
                  client_id: "agent",
                  secret_file: secretFile,
                  resource: `urn:skein:store:${DATABASE}`,
                },
              },
              tools: ["document_get"],
              branch: "'agent-' & workflow_id",
            },
          },
        },
      },
    },
  }),
);
// A run started before the worker connects waits for it.
children.push(
  spawn(
    process.execPath,
    [bin("skein"), "worker", "agent", doc, "--endpoint", grpc, "--token-file", tokenFile],
    { env, stdio: ["ignore", "ignore", "ignore"] },
  ),
);

const api = async (path: string, body: object) => {
  const response = await fetch(`${httpUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: a bench reads a few fields of each answer
  const answer = (await response.json()) as any;
  if (!response.ok) throw new Error(`${path}: ${JSON.stringify(answer)}`);
  return answer;
};
await api("/workflows/definitions", {
  definition:
    "name: work\ntask_queue: agents\nretry: { max_attempts: 1 }\nsteps:\n  - { id: a, call: { action: writer, start_to_close_ms: 600000 } }\n",
});

/** One attempt of `calls` turns, each one tool call of `tool`; the turn times (ms). */
async function attempt(calls: number, tool: string): Promise<number[]> {
  const first = model.requests.length;
  const replies: ScriptedReply[] = Array.from({ length: calls }, (_, i) => ({
    tool_calls: [
      {
        id: `c${i}`,
        name: tool,
        arguments: JSON.stringify({ collection: "c", key: `k${(i * 7) % 1000}` }),
      },
    ],
  }));
  model.push(...replies, { content: "done" });
  const started = await api("/workflows/start", { name: "work", input: "bench" });
  const ended = (await api("/workflows/describe", {
    workflow_id: started.workflow_id,
    wait_ms: 60_000,
  })) as { run: { status: string } };
  if (ended.run.status !== "Completed") throw new Error(JSON.stringify(ended));
  // Turn i: from the model's request i to request i + 1 (its reply, the call, the next ask).
  const times = model.arrivals.slice(first + 1);
  return times.map((t, i) => t - model.arrivals[first + i]!);
}

async function socketGets(calls: number): Promise<number[]> {
  const client = await StoreClient.connect(socketPath, { pass });
  const out: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await client.get("c", `k${(i * 7) % 1000}`);
    out.push(performance.now() - t);
  }
  await client.close();
  return out;
}

async function mcpGets(calls: number): Promise<number[]> {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(mcpUrl, {
      requestInit: { headers: { authorization: `Bearer ${pass}` } },
    }),
  );
  const out: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await client.callTool({
      name: "document_get",
      arguments: { collection: "c", key: `k${(i * 7) % 1000}` },
    });
    out.push(performance.now() - t);
  }
  await client.close();
  return out;
}

// Warm-up: the first attempt pays for the pass, the branch and the JIT.
await attempt(WARMUP, "store_document_get");
await socketGets(WARMUP * 5);
await mcpGets(WARMUP * 5);

const round = (v: number) => Number(v.toFixed(3));
const perSecond = (xs: number[]) => Math.round(xs.length / (xs.reduce((a, b) => a + b, 0) / 1000));
const figures = (xs: number[]) => ({
  calls_per_s: perSecond(xs),
  p50_ms: round(percentile(xs, 50)),
  p99_ms: round(percentile(xs, 99)),
});
const noCall: number[] = [];
const socket: number[] = [];
const cases: BenchCase[] = [
  {
    name: `agent turn with no request (unknown tool), ${CALLS} turns`,
    async run() {
      noCall.push(...(await attempt(CALLS, "no_such_tool")));
      return figures(noCall);
    },
  },
  {
    name: `socket document.get (StoreClient), ${CALLS} calls`,
    async run() {
      socket.push(...(await socketGets(CALLS)));
      return figures(socket);
    },
  },
  {
    name: `SDK client → mcp-http → store document_get, ${CALLS} calls`,
    async run() {
      return figures(await mcpGets(CALLS));
    },
  },
  {
    name: `agent turn with an MCP document_get (worker → mcp-http → store), ${CALLS} turns`,
    async run() {
      const viaAgent = await attempt(CALLS, "store_document_get");
      const added = percentile(viaAgent, 50) - percentile(noCall, 50);
      return {
        ...figures(viaAgent),
        p50_added_per_call_ms: round(added),
        p50_added_over_socket_ms: round(added - percentile(socket, 50)),
      };
    },
  },
];
await runBench("agent-mcp", { measures: MEASURES }, cases);
await model.close();
await world.stop();
process.exit(0);
