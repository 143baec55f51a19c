// Test support for cluster tests: real `skein serve` nodes on the local PostgreSQL, each in
// its own directory with its own `cluster.node_id`, all on one fresh schema (dropped when the
// test ends) and sharing node 0's signing key (as an operator copies it); real module
// workers whose every execution is counted in a shared effects file.
//
// Two readiness signals keep the tests independent of process start-up order on a loaded
// machine: `worker(i)` returns once node i's matcher lists the worker (an owner with no
// worker of its own relays an attempt to whichever node has one first, so a test that
// expects work on a given node's worker must not start runs before that worker is there),
// and `settled()` waits until every shard is served by its rendezvous owner (a lease row
// that is free mid-handover looks like a distinct "owner" to a count of owners).

import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { signingKeyPath } from "../../../src/workflow/auth/keys.ts";
import { desiredOwners } from "../../../src/workflow/cluster/rendezvous.ts";
import { freshSchema, POSTGRES_URL } from "../../support/postgres.ts";
import { spawnWorker, type WorkerProcess, writeJson } from "../../support/worker-endpoint.ts";
import {
  type Answer,
  adminToken,
  call,
  type ServerProcess,
  startServe,
  tempDir,
} from "../support/server.ts";

export const CLUSTER_ACTIVITIES = fileURLToPath(
  new URL("../../fixtures/workers/cluster-activities.ts", import.meta.url),
);

export interface ClusterOptions {
  readonly shards?: number;
  /**
   * `cluster.lease_ttl_ms` (default 10 s: a node stalled by a loaded machine must not lose
   * its leases in a test that does not take them away; tests of takeover set a short one).
   */
  readonly ttlMs?: number;
  /** `namespaces.max_in_flight_activities` (default 1024). */
  readonly quota?: number;
  /** More TOML for every node's config. */
  readonly toml?: string;
}

export interface ClusterFixture {
  readonly schema: string;
  readonly dir: string;
  readonly effectsFile: string;
  readonly nodes: (ServerProcess | undefined)[];
  /** The admin token of node 0 (accepted by every node: one signing key). */
  token(): Promise<string>;
  /** Starts node `i` (`n<i>`), or starts it again with the same id. */
  start(i: number): Promise<ServerProcess>;
  /** A worker document serving `effect` on queue q, and a 0600 file with the admin token. */
  workerFiles(tag: string): Promise<{ document: string; token: string }>;
  /**
   * A module worker (`w-<tag>`) serving `effect` on queue q of namespace home at node `i`,
   * returned once node `i` lists it on that queue (POST /task-queues/describe).
   */
  worker(i: number, tag: string): Promise<WorkerProcess>;
  /**
   * An `agent` worker (`agents`) on queue `agents` of namespace home at node `i`, and so its
   * agent-transport connection: action `assistant` asks the model at `modelUrl`, advertising
   * `capabilities` (default: all), with the exec tool `echo`; returned once node `i` lists it.
   */
  agentWorker(
    i: number,
    modelUrl: string,
    capabilities?: readonly string[],
  ): Promise<WorkerProcess>;
  /**
   * Waits until the shards are where rendezvous hashing over the running nodes puts them
   * and every running node serves exactly the shards it leases (no handover under way).
   */
  settled(): Promise<void>;
  /** Executions per effect key: the worker tag of each. */
  effects(): Promise<Map<string, string[]>>;
  /** Executions per effect key: the worker tag and the attempt number of each, in order. */
  executions(): Promise<Map<string, { by: string; attempt: number }[]>>;
  /** Every shard's lease by shard; `owner` null when free or expired. */
  leases(): Promise<{ shard: number; owner: string | null; epoch: number }[]>;
  sql<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
}

export async function clusterFixture(
  t: TestContext,
  options: ClusterOptions = {},
): Promise<ClusterFixture> {
  const temp = await tempDir();
  const dir = temp.path;
  const effectsFile = join(dir, "effects.tsv");
  await writeFile(effectsFile, "");
  const nodes: (ServerProcess | undefined)[] = [];
  const workers: WorkerProcess[] = [];
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  t.after(async () => {
    for (const w of workers) w.kill("SIGKILL");
    await Promise.all(workers.map((w) => w.exited));
    for (const node of nodes) {
      node?.child.kill("SIGCONT");
      await node?.stop("SIGKILL");
    }
    await admin.end();
    await temp.remove();
  });
  // After the teardown above: a test's after hooks run in the order they were added, and
  // dropping the schema under live nodes can deadlock with their transactions.
  const schema = freshSchema(t, "skein_cluster");
  const config = async (i: number) => {
    const home = join(dir, `n${i}`);
    await mkdir(join(home, "data"), { recursive: true, mode: 0o700 });
    if (i > 0) {
      await copyFile(signingKeyPath(join(dir, "n0", "data")), signingKeyPath(join(home, "data")));
    }
    const file = join(home, "skein.toml");
    await writeFile(
      file,
      // Three connections a node: enough for a test's load, and two suites at once
      // (`npm test & npm test`) stay within PostgreSQL's default 100 connections.
      `data_dir = "data"\n[storage]\nurl = "${POSTGRES_URL}"\nschema = "${schema}"\npool_size = 3\n` +
        `[cluster]\nnode_id = "n${i}"\nshards = ${options.shards ?? 16}\n` +
        `lease_ttl_ms = ${options.ttlMs ?? 10_000}\n[namespaces]\ndefault = "home"\n` +
        `max_in_flight_activities = ${options.quota ?? 1024}\n${options.toml ?? ""}\n`,
    );
    return file;
  };
  // Starts a worker of namespace home at node i; returns once node i lists it on its queue.
  const connect = async (
    i: number,
    w: { kind: string; document: string; token: string; queue: string; name: string },
    more: readonly string[] = [],
    env: Record<string, string> = {},
  ) => {
    const { queue, name } = w;
    const worker = spawnWorker(
      [w.kind, w.document, "--endpoint", nodes[i]!.grpc!, "--token-file", w.token].concat(
        ["--namespace", "home"],
        more,
      ),
      env,
    );
    workers.push(worker);
    const url = nodes[i]!.url;
    const bearer = await fixture.token();
    await until(`${name} to be listed by n${i}`, async () => {
      if (worker.child.exitCode !== null || worker.child.signalCode !== null) {
        throw new Error(`worker ${name} exited before connecting:\n${worker.stderr()}`);
      }
      const r = await call(url, "POST", "/task-queues/describe", {
        token: bearer,
        body: { namespace: "home", task_queue: queue },
      });
      const names = r.status === 200 ? (r.body.workers as { name: string }[]) : [];
      return names.some((w) => w.name === name) ? true : undefined;
    });
    return worker;
  };
  const sql = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) =>
    (await admin.query<R>(text, values)).rows;
  const fixture: ClusterFixture = {
    schema,
    dir,
    effectsFile,
    nodes,
    token: () => adminToken(join(dir, "n0")),
    start: async (i) => {
      const node = await startServe(await config(i));
      nodes[i] = node;
      return node;
    },
    workerFiles: async (tag) => {
      const home = join(dir, `w-${tag}`);
      await mkdir(home, { recursive: true });
      const token = join(home, "worker.token");
      await writeFile(token, `${await fixture.token()}\n`, { mode: 0o600 });
      const document = join(home, "worker.json");
      await writeFile(
        document,
        JSON.stringify({
          name: `w-${tag}`,
          task_queue: "q",
          actions: { effect: { module: CLUSTER_ACTIVITIES, export: "effect" } },
        }),
      );
      return { document, token };
    },
    worker: async (i, tag) => {
      const { document, token } = await fixture.workerFiles(tag);
      return connect(
        i,
        { kind: "module", document, token, queue: "q", name: `w-${tag}` },
        [
          "--concurrency",
          "64",
          "--reconnect-initial-backoff",
          "0.05",
          "--reconnect-max-backoff",
          "0.2",
        ],
        { SKEIN_TEST_EFFECTS: effectsFile, SKEIN_TEST_WORKER_TAG: tag },
      );
    },
    agentWorker: async (i, modelUrl, capabilities) => {
      const { token } = await fixture.workerFiles(`agents-${i}`);
      const agent = { base_url: modelUrl, model: "scripted", max_turns: 5 };
      const document = await writeJson(join(dir, `w-agents-${i}`), "agents.json", {
        name: "agents",
        task_queue: "agents",
        actions: {
          assistant: { agent: capabilities === undefined ? agent : { ...agent, capabilities } },
          echo: {
            description: "echoes",
            exec: { command: [process.execPath, "-e", "process.stdin.pipe(process.stdout)"] },
          },
        },
      });
      const agents = { kind: "agent", document, token, queue: "agents", name: "agents" };
      return connect(i, agents);
    },
    settled: async () => {
      const running = nodes.flatMap((n, i) =>
        n !== undefined && n.child.exitCode === null && n.child.signalCode === null ? [i] : [],
      );
      const want = desiredOwners(
        running.map((i) => `n${i}`),
        options.shards ?? 16,
      );
      const token = await fixture.token();
      await until("every shard served by its rendezvous owner", async () => {
        const leases = await fixture.leases();
        if (!leases.every((l) => l.owner === want[l.shard])) return undefined;
        for (const i of running) {
          const r = await call(nodes[i]!.url, "GET", "/cluster", { token });
          const leased = leases.filter((l) => l.owner === `n${i}`).map((l) => l.shard);
          if (r.status !== 200 || JSON.stringify(r.body.owned) !== JSON.stringify(leased)) {
            return undefined;
          }
        }
        return true;
      });
    },
    effects: async () => {
      const byKey = new Map<string, string[]>();
      for (const [key, runs] of await fixture.executions()) {
        byKey.set(
          key,
          runs.map((r) => r.by),
        );
      }
      return byKey;
    },
    executions: async () => {
      const byKey = new Map<string, { by: string; attempt: number }[]>();
      for (const line of (await readFile(effectsFile, "utf8")).split("\n")) {
        if (line === "") continue;
        const [key, by, attempt] = line.split("\t") as [string, string, string];
        byKey.set(key, [...(byKey.get(key) ?? []), { by, attempt: Number(attempt) }]);
      }
      return byKey;
    },
    leases: async () =>
      (
        await sql<{ shard: number; owner: string | null; epoch: string }>(
          `SELECT shard, CASE WHEN expires_at > clock_timestamp() THEN owner END AS owner, epoch
           FROM "${schema}".shard_leases ORDER BY shard`,
        )
      ).map((r) => ({ shard: r.shard, owner: r.owner, epoch: Number(r.epoch) })),
    sql,
  };
  return fixture;
}

/**
 * `POST /workflows/start`, sent again while it answers 503 (`shard_unavailable`: the shard
 * was between owners, nothing was recorded), as a client does; bounded.
 */
export async function startRun(url: string, token: string, body: object): Promise<Answer> {
  let answer = await call(url, "POST", "/workflows/start", { token, body });
  for (let retry = 0; answer.status === 503 && retry < 50; retry++) {
    await new Promise((done) => setTimeout(done, 100));
    answer = await call(url, "POST", "/workflows/start", { token, body });
  }
  return answer;
}

/** Polls `check` every 25 ms until it returns a value other than undefined; bounded. */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 25));
  }
}
