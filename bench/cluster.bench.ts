/**
 * `npm run bench:cluster`: cluster mode on the local PostgreSQL, with real `skein serve`
 * nodes (each its own directory and `cluster.node_id`, one fresh schema per cluster size,
 * dropped afterwards) and one `skein worker module` per node (a worker receives the tasks of
 * the shards its node serves).
 *
 * - Throughput with 1, 2 and 3 nodes, closed loop as `bench:workflows`: C lanes, each
 *   starting a run of M no-op steps on node (lane mod N) and awaiting its end with one
 *   describe that waits (`wait_ms`), then starting the next; W × M activities over the wall
 *   time. Starts carry no workflow id, so each lands in a shard of the node it is sent to.
 * - Join: with 2 nodes, a third joins while the closed loop runs; the time from its join
 *   (the node is up and a member) until ownership is balanced (every node serves exactly the
 *   shards rendezvous hashing gives it, as `GET /cluster` shows). Every shard a join moves
 *   moves within the lease round that notices it, so the goal is well under one round.
 * - Takeover: with 3 nodes, the time from a node's SIGKILL until every shard it held is
 *   served by another node (its lease taken at a new epoch and its runs recovered, as
 *   `GET /cluster` shows). The goal is the lease TTL plus one second.
 *
 * Knobs: BENCH_WORKFLOWS (600 per size), BENCH_STEPS (10), BENCH_LANES (64),
 * BENCH_SHARDS (64), BENCH_LEASE_TTL_MS (3000), BENCH_SIZES (`1,2,3`; the smoke size runs
 * 2 and 3, which have the join and the takeover), BENCH_POSTGRES_URL
 * (`postgres://postgres@127.0.0.1:5432/test`). Without PostgreSQL every case is skipped.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { signingKeyPath } from "../src/workflow/auth/keys.ts";
import { desiredOwners } from "../src/workflow/cluster/rendezvous.ts";
import { ACTIVITIES } from "../test/support/worker-endpoint.ts";
import {
  adminToken,
  call,
  type ServerProcess,
  SKEIN_BIN,
  startServe,
  tempDir,
} from "../test/workflow/support/server.ts";
import { type BenchCase, type Figures, knob, runBench, SMOKE, skipped } from "./harness.ts";
import { postgresMissing } from "./support/needs.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = [
  "src/workflow/cluster",
  "src/workflow/persistence/postgres",
  "src/workflow/engine",
];

const W = knob("BENCH_WORKFLOWS", 600, 20);
const M = knob("BENCH_STEPS", 10, 3);
const C = knob("BENCH_LANES", 64, 8);
const SHARDS = knob("BENCH_SHARDS", 64, 8);
const TTL = knob("BENCH_LEASE_TTL_MS", 3000, 1000);
const PG_URL = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const SIZES = (process.env.BENCH_SIZES ?? (SMOKE ? "2,3" : "1,2,3")).split(",").map(Number);

interface Cluster {
  readonly schema: string;
  readonly nodes: ServerProcess[];
  readonly workers: ChildProcess[];
  readonly token: string;
  /** Starts one more node (and its worker); resolves once it is up and a member. */
  join(): Promise<ServerProcess>;
  close(): Promise<void>;
}

async function startCluster(n: number): Promise<Cluster> {
  const schema = `skein_bench_${randomBytes(6).toString("hex")}`;
  const dir = await tempDir();
  const nodes: ServerProcess[] = [];
  const workers: ChildProcess[] = [];
  const startNode = async (i: number) => {
    const home = join(dir.path, `n${i}`);
    await mkdir(join(home, "data"), { recursive: true, mode: 0o700 });
    if (i > 0) {
      await copyFile(
        signingKeyPath(join(dir.path, "n0", "data")),
        signingKeyPath(join(home, "data")),
      );
    }
    const file = join(home, "skein.toml");
    await writeFile(
      file,
      `data_dir = "data"\n[storage]\nurl = "${PG_URL}"\nschema = "${schema}"\n[cluster]\n` +
        `node_id = "n${i}"\nshards = ${SHARDS}\nlease_ttl_ms = ${TTL}\n` +
        `[namespaces]\ndefault = "default"\n`,
    );
    const node = await startServe(file);
    nodes.push(node);
    return node;
  };
  for (let i = 0; i < n; i++) await startNode(i);
  const token = await adminToken(join(dir.path, "n0"));
  await settle(nodes, token);
  const doc = join(dir.path, "worker.json");
  await writeFile(
    doc,
    JSON.stringify({
      name: "bench",
      task_queue: "q",
      actions: { noop: { module: ACTIVITIES, export: "noop" } },
    }),
  );
  const tokenFile = join(dir.path, "worker.token");
  await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
  const startWorker = (node: ServerProcess) => {
    workers.push(
      spawn(
        process.execPath,
        [
          SKEIN_BIN,
          "worker",
          "module",
          doc,
          "--endpoint",
          node.grpc!,
          "--concurrency",
          "256",
        ].concat(["--token-file", tokenFile]),
        {
          // The killed node's worker would only report, over and over, that it cannot reconnect.
          stdio: "ignore",
          env: { ...process.env, SKEIN_LOG_LEVEL: "warn" },
        },
      ),
    );
  };
  for (const node of nodes) startWorker(node);
  return {
    schema,
    nodes,
    workers,
    token,
    join: async () => {
      const node = await startNode(nodes.length);
      startWorker(node);
      return node;
    },
    close: async () => {
      for (const w of workers) w.kill("SIGKILL");
      for (const node of nodes) await node.stop("SIGKILL");
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
      await dir.remove();
    },
  };
}

/** Waits until the nodes' served shards add up to every shard (handovers done). */
async function settle(nodes: readonly ServerProcess[], token: string): Promise<number[][]> {
  for (;;) {
    const owned = await Promise.all(
      nodes.map(async (n) => {
        const r = await call(n.url, "GET", "/cluster", { token });
        return (r.body.owned ?? []) as number[];
      }),
    );
    if (owned.reduce((sum, o) => sum + o.length, 0) === SHARDS) return owned;
    await new Promise((done) => setTimeout(done, 10));
  }
}

/** Starts answered 503 and sent again (a lease lost under load shows here). */
let retries = 0;

/** Registers the benchmark's definition: M no-op steps on queue q. */
async function defineBench(cluster: Cluster): Promise<void> {
  const { nodes, token } = cluster;
  const steps = Array.from(
    { length: M },
    (_, i) => `  - { id: s${i}, call: { action: noop, input: "{}" } }`,
  );
  const r = await call(nodes[0]!.url, "POST", "/workflows/definitions", {
    token,
    body: { definition: `name: bench\ntask_queue: q\nsteps:\n${steps.join("\n")}\n` },
  });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
}

/** W workflows (after a warm-up) in the closed loop; activities/s. */
async function throughput(cluster: Cluster): Promise<number> {
  await defineBench(cluster);
  await loop(cluster, Math.min(W, 100)); // warm-up
  const t0 = performance.now();
  await loop(cluster, W);
  return (W * M) / ((performance.now() - t0) / 1000);
}

/** C lanes, each starting a run and awaiting its end, until `total` runs were started. */
async function loop(cluster: Cluster, total: number | (() => boolean)): Promise<void> {
  const { nodes, token } = cluster;
  const run = async (lane: number) => {
    const url = nodes[lane % nodes.length]!.url;
    // A 503 (`shard_unavailable`: the shard is between owners) was not recorded: retry.
    let started = await call(url, "POST", "/workflows/start", { token, body: { name: "bench" } });
    for (let retry = 0; started.status === 503 && retry < 50; retry++) {
      retries++;
      await new Promise((done) => setTimeout(done, 100));
      started = await call(url, "POST", "/workflows/start", { token, body: { name: "bench" } });
    }
    if (started.status !== 200) throw new Error(`start: ${JSON.stringify(started.body)}`);
    for (;;) {
      const d = await call(url, "POST", "/workflows/describe", {
        token,
        body: { workflow_id: started.body.workflow_id, wait_ms: 30_000 },
      });
      if (d.body.run?.status === "Completed") return;
      if (d.body.run?.status !== "Running") throw new Error(JSON.stringify(d.body));
    }
  };
  let next = 0;
  const more = typeof total === "number" ? () => next < total : total;
  await Promise.all(
    Array.from({ length: C }, async (_, lane) => {
      while (more()) {
        next++;
        await run(lane);
      }
    }),
  );
}

/**
 * A node joins while the closed loop runs: the time from its join (up and a member) until
 * every node serves exactly the shards rendezvous hashing gives it.
 */
async function joinUnderLoad(cluster: Cluster): Promise<{ ms: number; owned: number[] }> {
  const { nodes, token } = cluster;
  let running = true;
  const load = loop(cluster, () => running);
  try {
    const node = await cluster.join();
    const t0 = performance.now();
    const ids = nodes.map((_, i) => `n${i}`);
    const want = desiredOwners(ids, SHARDS);
    for (;;) {
      const owned = await Promise.all(
        nodes.map(
          async (n) =>
            ((await call(n.url, "GET", "/cluster", { token })).body.owned ?? []) as number[],
        ),
      );
      const balanced = owned.every(
        (shards, i) =>
          JSON.stringify(shards) ===
          JSON.stringify(want.flatMap((owner, s) => (owner === ids[i] ? [s] : []))),
      );
      if (balanced) return { ms: performance.now() - t0, owned: owned.map((o) => o.length) };
      if (node.child.exitCode !== null) throw new Error("the joining node exited");
      await new Promise((done) => setTimeout(done, 10));
    }
  } finally {
    running = false;
    await load;
  }
}

async function takeover(cluster: Cluster): Promise<number> {
  const { nodes, token } = cluster;
  const before = await settle(nodes, token);
  const victim = nodes.length - 1;
  const theirs = before[victim]!;
  const t0 = performance.now();
  nodes[victim]!.child.kill("SIGKILL");
  const survivors = nodes.slice(0, victim);
  for (;;) {
    const owned = new Set(
      (
        await Promise.all(
          survivors.map(async (n) => (await call(n.url, "GET", "/cluster", { token })).body.owned),
        )
      ).flat() as number[],
    );
    if (theirs.every((s) => owned.has(s))) return performance.now() - t0;
    await new Promise((done) => setTimeout(done, 10));
  }
}

/** One cluster size: its throughput, and with 3 nodes the takeover after a SIGKILL. */
async function size(n: number): Promise<Figures> {
  const cluster = await startCluster(n);
  try {
    retries = 0;
    const figures: Figures = {
      activities_per_s: Math.round(await throughput(cluster)),
      starts_retried_after_503: retries,
    };
    if (n === 2) {
      const joined = await joinUnderLoad(cluster);
      figures.join_to_balanced_ms = Math.round(joined.ms);
      console.log(
        `  join of a 3rd node under load: ${joined.ms.toFixed(0)} ms until ownership was ` +
          `balanced (${joined.owned.join(" / ")} of ${SHARDS} shards; lease round ` +
          `${Math.floor(TTL / 3)} ms)`,
      );
    }
    if (n === 3) {
      figures.takeover_ms = Math.round(await takeover(cluster));
      figures.takeover_goal_ms = TTL + 1000;
    }
    return figures;
  } catch (error) {
    for (const [i, node] of cluster.nodes.entries()) {
      const lines = (node.stdout() + node.stderr())
        .split("\n")
        .filter((l) => /lease|fenced|round/.test(l));
      console.error(`n${i}:\n${lines.slice(0, 8).join("\n")}`);
    }
    throw error;
  } finally {
    await cluster.close();
  }
}

const missing = await postgresMissing(PG_URL);
const cases: BenchCase[] = SIZES.map((n) => ({
  name:
    `${n} node${n === 1 ? "" : "s"}: ${W} workflows × ${M} no-op steps, ${C} lanes, ${SHARDS} ` +
    `shards, lease TTL ${TTL} ms${n === 2 ? "; then a 3rd node joins under load until ownership is balanced" : ""}${n === 3 ? "; then SIGKILL of one node until its shards are served elsewhere" : ""}`,
  run: () => (missing === undefined ? size(n) : skipped(missing)),
}));
await runBench("cluster", { measures: MEASURES }, cases);
