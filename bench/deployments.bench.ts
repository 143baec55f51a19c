/**
 * `npm run bench:deployments`: worker deployments end to end. A real server (in this
 * process, real socket, SQLite with synchronous commits, deployments enabled) supervises
 * real `skein worker` processes that connect to a gRPC worker endpoint in this process.
 * Figures: PUT-to-answer (durable commit + spawn) and PUT-to-connected latency, launch
 * replacement, crash-to-reconnected latency (includes the first 0.5 s restart backoff),
 * idempotent PUT and managed-view throughput.
 */

import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../src/common/log.ts";
import { startWorkerEndpoint } from "../src/workflow/rpc/server.ts";
import { startServer } from "../src/workflow/server.ts";
import { type Figures, knob, percentile, runBench } from "./harness.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = ["src/workflow/deployments", "src/workflow/supervisor", "src/worker"];

const WORKERS = knob("BENCH_WORKERS", 6, 1);
/** Requests per throughput case, as a share of the normal counts. */
const SCALE = knob("BENCH_SCALE", 1, 0.02);
const CYCLES = knob("BENCH_CYCLES", 5, 1);

const dir = await mkdtemp(join(tmpdir(), "skein-bench-deploy-"));
await writeFile(join(dir, "skein.toml"), 'data_dir = "data"\n[deployments]\nenabled = true\n');
const server = await startServer(join(dir, "skein.toml"), {
  logger: silentLogger(),
  listen: { host: "127.0.0.1", port: 0 },
});
const endpoint = await startWorkerEndpoint("127.0.0.1:0", {
  verify: async (token) => {
    if (token !== "bench-worker") throw new Error("unknown token");
    return { subject: "bench", worker: true, namespaces: "*" };
  },
  namespaceGate: async () => true,
  events: {
    completed: (_ref, _output, _ctx, receipt) => receipt.recorded(),
    failed: (_ref, _failure, _ctx, receipt) => receipt.recorded(),
    heartbeat: () => {},
    detached: () => {},
    attached: () => {},
  },
});
const admin = (await readFile(join(server.config.dataDir, "admin.token"), "utf8")).trim();
const headers = { authorization: `Bearer ${admin}`, "content-type": "application/json" };
const documentPath = join(dir, "worker.json");
await writeFile(
  documentPath,
  JSON.stringify({ name: "bench", task_queue: "q", actions: { echo: { command: ["cat"] } } }),
);
const tokenPath = join(dir, "worker.token");
await writeFile(tokenPath, "bench-worker\n", { mode: 0o600 });

function record(extra: string[] = [], desired = "running") {
  return {
    artifact: {
      type: "builtin",
      verb: [
        "worker",
        "exec",
        documentPath,
        "--endpoint",
        `127.0.0.1:${endpoint.port}`,
        "--token-file",
        tokenPath,
        ...extra,
      ],
    },
    namespaces: ["default"],
    task_queue: "q",
    desired,
  };
}

// biome-ignore lint/suspicious/noExplicitAny: the bench reads a few fields of JSON answers
async function api(method: string, path: string, body?: object): Promise<any> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${JSON.stringify(json)}`);
  return json;
}

async function connected(identity: string): Promise<void> {
  while (!endpoint.matcher.workers().some((w) => w.deployment === identity)) {
    await new Promise((r) => setTimeout(r, 2));
  }
}

function figures(answer: number[], connect: number[]): Figures {
  return {
    workers: answer.length,
    answer_p50_ms: percentile(answer, 50),
    answer_max_ms: Math.max(...answer),
    connected_p50_ms: percentile(connect, 50),
    connected_max_ms: Math.max(...connect),
  };
}

async function load(count: number, concurrency: number, send: () => Promise<unknown>) {
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) {
        const t = performance.now();
        await send();
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  return {
    requests: count,
    concurrency,
    req_per_s: Math.round(count / seconds),
    p50_ms: percentile(latencies, 50),
    p99_ms: percentile(latencies, 99),
  };
}

try {
  await runBench("deployments", { measures: MEASURES }, [
    {
      name: `PUT new running record → answer (child live) → worker connected, ${WORKERS} in turn`,
      run: async () => {
        const answer: number[] = [];
        const connect: number[] = [];
        for (let i = 0; i < WORKERS; i++) {
          const t = performance.now();
          const r = await api("PUT", `/worker-deployments/w${i}`, record());
          answer.push(performance.now() - t);
          await connected(`w${i}@${r.deployment.revision}`);
          connect.push(performance.now() - t);
        }
        return figures(answer, connect);
      },
    },
    {
      name: "PUT changing the launch → old stopped, new live → new launch connected",
      run: async () => {
        const answer: number[] = [];
        const connect: number[] = [];
        for (let i = 0; i < WORKERS; i++) {
          const t = performance.now();
          const r = await api("PUT", `/worker-deployments/w${i}`, record(["--concurrency", "4"]));
          answer.push(performance.now() - t);
          await connected(`w${i}@${r.deployment.revision}`);
          connect.push(performance.now() - t);
        }
        return figures(answer, connect);
      },
    },
    {
      name: "crash (SIGKILL) → restarted after backoff → reconnected",
      run: async () => {
        const restart: number[] = [];
        for (let i = 0; i < WORKERS; i++) {
          const managed = await api("GET", "/workers/managed");
          const row = managed.managed.find((m: { name: string }) => m.name === `w${i}`);
          const t = performance.now();
          process.kill(row.pid, "SIGKILL");
          while (endpoint.matcher.workers().some((w) => w.deployment === `w${i}@${row.revision}`)) {
            await new Promise((r) => setTimeout(r, 2));
          }
          await connected(`w${i}@${row.revision}`);
          restart.push(performance.now() - t);
        }
        return {
          workers: WORKERS,
          reconnected_p50_ms: percentile(restart, 50),
          reconnected_max_ms: Math.max(...restart),
        };
      },
    },
    {
      name: "PUT of an unchanged record (decode, verb check, read, no write), 4 in flight",
      run: () =>
        load(Math.max(4, Math.round(400 * SCALE)), 4, () =>
          api("PUT", "/worker-deployments/w0", record(["--concurrency", "4"])),
        ),
    },
    {
      name: `GET /workers/managed (${WORKERS} records joined with live processes), 4 in flight`,
      run: () =>
        load(Math.max(4, Math.round(2000 * SCALE)), 4, () => api("GET", "/workers/managed")),
    },
    {
      name: "desired stopped then running (stop with SIGTERM, start), one record",
      run: async () => {
        const times: number[] = [];
        for (let i = 0; i < CYCLES; i++) {
          const t = performance.now();
          await api("POST", "/worker-deployments/w0/desired-state", { desired: "stopped" });
          await api("POST", "/worker-deployments/w0/desired-state", { desired: "running" });
          times.push(performance.now() - t);
        }
        return {
          cycles: CYCLES,
          cycle_p50_ms: percentile(times, 50),
          cycle_max_ms: Math.max(...times),
        };
      },
    },
  ]);
} finally {
  await server.close();
  await endpoint.close();
  await rm(dir, { recursive: true, force: true });
}
