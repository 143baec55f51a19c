/**
 * `npm run bench:store-config`: what the store's configuration costs. Decoding the complete
 * example service file (every group on), the door file and the `mcp_http` policy; the
 * `serve` start-up checks on a real directory tree (every check, nothing created); and a
 * real `skein-store serve` process from spawn to a connectable socket, then to a clean stop.
 */

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir as mkdirP, mkdtemp as mkdtempP, rm as rmP, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { child, decode, parseJson } from "../src/common/decode/index.ts";
import { doorFile } from "../src/store/config/door.ts";
import { mcpHttpPolicy } from "../src/store/config/mcp-http.ts";
import { serviceFile } from "../src/store/config/service-file.ts";
import { planStartup } from "../src/store/startup/plan.ts";
import { knob, percentile, runBench, throughput } from "./harness.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = [
  "src/store/config",
  "src/store/startup",
  "src/store/service.ts",
  "bin/skein-store.ts",
];

const page = readFileSync(
  fileURLToPath(new URL("../docs/store-config.md", import.meta.url)),
  "utf8",
);
const example = (name: string) => {
  const m = new RegExp(`<!-- example: ${name} -->\\n\`\`\`json\\n([\\s\\S]*?)\\n\`\`\``).exec(page);
  if (m === null) throw new Error(`example ${name} not found in docs/store-config.md`);
  return m[1]!;
};
const serviceText = example("service");
const doorText = example("door");
const mcpRaw = (parseJson(serviceText) as { mcp_http: unknown }).mcp_http;
const BIN = fileURLToPath(new URL("../bin/skein-store.ts", import.meta.url));
const PLANS = knob("BENCH_PLANS", 300, 10);
const SERVES = knob("BENCH_SERVES", 5, 1);

async function startupFigures() {
  const root = await mkdtempP(join(tmpdir(), "skein-bench-"));
  const run = join(root, "run");
  await mkdirP(run, { mode: 0o700 });
  const config = decode(
    serviceFile,
    parseJson(
      JSON.stringify({
        data_dir: join(root, "store"),
        branch_cache_bytes_per_shard: 1048576,
        max_frame: 1048576,
        max_clients: 8,
        max_page: 100,
        timeout_ms: 5000,
        create: { shards: 1, cache_bytes_total: 1048576, executor_threads: 1 },
      }),
    ),
  );
  if (!config.ok) throw config.error;
  const samples: number[] = [];
  for (let i = 0; i < PLANS; i++) {
    const t = performance.now();
    await planStartup(config.value, { create: true, env: { XDG_RUNTIME_DIR: run } });
    samples.push((performance.now() - t) * 1000);
  }
  await rmP(root, { recursive: true, force: true });
  return {
    runs: samples.length,
    p50_us: percentile(samples, 50),
    p99_us: percentile(samples, 99),
  };
}

function connects(path: string): Promise<boolean> {
  return new Promise((done) => {
    const c = connect(path);
    c.once("connect", () => {
      c.destroy();
      done(true);
    });
    c.once("error", () => done(false));
  });
}

async function serveFigures() {
  const root = await mkdtempP(join(tmpdir(), "skein-bench-serve-"));
  const run = join(root, "run");
  await mkdirP(run, { mode: 0o700 });
  const file = join(root, "service.json");
  await writeFile(
    file,
    JSON.stringify({
      data_dir: join(root, "store"),
      branch_cache_bytes_per_shard: 1048576,
      max_frame: 1048576,
      max_clients: 8,
      max_page: 100,
      timeout_ms: 5000,
      create: { shards: 1, cache_bytes_total: 1048576, executor_threads: 1 },
    }),
  );
  const socket = join(run, "skein-store", "store.sock");
  const ready: number[] = [];
  const stop: number[] = [];
  for (let i = 0; i < SERVES; i++) {
    const args = i === 0 ? ["serve", file, "--create"] : ["serve", file];
    const t = performance.now();
    const proc = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, XDG_RUNTIME_DIR: run, SKEIN_LOG_LEVEL: "warn" },
      stdio: "ignore",
    });
    while (!(await connects(socket))) await new Promise((r) => setTimeout(r, 5));
    ready.push(performance.now() - t);
    const s = performance.now();
    const exited = new Promise((done) => proc.once("exit", done));
    proc.kill("SIGTERM");
    await exited;
    stop.push(performance.now() - s);
  }
  await rmP(root, { recursive: true, force: true });
  return {
    runs: ready.length,
    spawn_to_socket_p50_ms: percentile(ready, 50),
    sigterm_to_exit_p50_ms: percentile(stop, 50),
  };
}

await runBench("store-config", { measures: MEASURES }, [
  {
    name: "service file (all groups): parse + decode",
    run: () => throughput(() => decode(serviceFile, parseJson(serviceText))),
  },
  {
    name: "door file: parse + decode",
    run: () => throughput(() => decode(doorFile, parseJson(doorText))),
  },
  {
    name: "mcp_http policy: decode",
    run: () => throughput(() => decode(mcpHttpPolicy, mcpRaw, child(undefined, "mcp_http"))),
  },
  { name: "serve start-up checks (real fs, --create plan)", run: startupFigures },
  { name: "serve process: spawn to socket, SIGTERM to exit", run: serveFigures },
]);
