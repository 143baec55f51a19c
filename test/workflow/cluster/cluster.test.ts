// Cluster mode with real `skein serve` processes on the local PostgreSQL (each test its own
// schema): runs started on any node complete exactly once, a killed node's shards are taken
// over and its acknowledged runs complete, a node paused past its lease cannot commit after
// it resumes, and a joining node takes its shards from the others.

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { startScriptedModel } from "../../../src/testing/scripted-model.ts";
import { loadSigningKey } from "../../../src/workflow/auth/keys.ts";
import { issueNodeToken } from "../../../src/workflow/auth/tokens.ts";
import { desiredOwners } from "../../../src/workflow/cluster/rendezvous.ts";
import { postgresRequired } from "../../support/postgres.ts";
import { call } from "../support/server.ts";
import { type ClusterFixture, clusterFixture, startRun, until } from "./nodes.ts";

const skip = await postgresRequired();

const PAIR = `name: pair
task_queue: q
steps:
  - { id: one, call: { action: effect, input: "{ 'key': input.k & '/1', 'ms': input.ms }" } }
  - { id: two, call: { action: effect, input: "{ 'key': input.k & '/2', 'ms': input.ms }" } }
`;

interface Event {
  type: string;
  activity_id?: number;
  output?: { key: string; by: string };
}

async function register(cluster: ClusterFixture, url: string): Promise<string> {
  const token = await cluster.token();
  const r = await call(url, "POST", "/workflows/definitions", {
    token,
    body: { definition: PAIR },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return token;
}

/** Waits (describe with wait_ms, on `url`) until the run has ended; returns its status. */
async function ended(url: string, token: string, workflowId: string): Promise<string> {
  return until(
    `run ${workflowId} to end`,
    async () => {
      const r = await call(url, "POST", "/workflows/describe", {
        token,
        body: { workflow_id: workflowId, wait_ms: 2000 },
      });
      if (r.status !== 200) return undefined;
      const status = r.body.run.status as string;
      return status === "Running" || status === "Paused" ? undefined : status;
    },
    60_000,
  );
}

async function history(url: string, token: string, workflowId: string): Promise<Event[]> {
  const r = await call(url, "POST", "/workflows/history", {
    token,
    body: { workflow_id: workflowId },
  });
  assert.equal(r.status, 200);
  return r.body.events as Event[];
}

function completedIds(events: readonly Event[]): number[] {
  return events.filter((e) => e.type === "ActivityCompleted").map((e) => e.activity_id!);
}

/**
 * Each node's ceiling share is ceil(quota × owned / S) for the shards it serves, and the sum
 * exceeds the quota only by rounding (less than one per node).
 */
async function checkShares(
  cluster: ClusterFixture,
  nodes: readonly { url: string }[],
  quota: number,
  total: number,
): Promise<void> {
  const token = await cluster.token();
  const statuses = await until("every node to serve only what it owns", async () => {
    const all = await Promise.all(
      nodes.map(async (n) => (await call(n.url, "GET", "/cluster", { token })).body),
    );
    const leases = await cluster.leases();
    const settled = all.every(
      (s) =>
        JSON.stringify(s.owned) ===
        JSON.stringify(leases.filter((l) => l.owner === s.node_id).map((l) => l.shard)),
    );
    return settled ? all : undefined;
  });
  let sum = 0;
  for (const status of statuses) {
    assert.equal(status.ceiling_share, Math.ceil((quota * status.owned.length) / total));
    sum += status.ceiling_share;
  }
  assert.equal(
    statuses.reduce((n, s) => n + s.owned.length, 0),
    total,
  );
  assert.ok(sum >= quota && sum <= quota + nodes.length - 1, `shares sum to ${sum}`);
}

describe("cluster mode: three skein serve nodes on one PostgreSQL", { skip }, () => {
  test("runs started on every node complete exactly once, each side effect once", async (t) => {
    const cluster = await clusterFixture(t);
    const nodes = [await cluster.start(0), await cluster.start(1), await cluster.start(2)];
    await cluster.settled();
    // Each node's own worker is connected before any run starts, so each node's runs go to it.
    await Promise.all([0, 1, 2].map((i) => cluster.worker(i, `w${i}`)));
    const token = await register(cluster, nodes[0]!.url);
    const started: { id: string; key: string }[] = [];
    for (let n = 0; n < 30; n++) {
      const key = `k${n}`;
      const node = nodes[n % 3]!;
      // Half with a client workflow id (forwarded to its shard's owner), half without.
      const body =
        n % 2 === 0
          ? { name: "pair", input: { k: key, ms: 0 } }
          : { name: "pair", input: { k: key, ms: 0 }, workflow_id: crypto.randomUUID() };
      const r = await startRun(node.url, token, body);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      started.push({ id: r.body.workflow_id, key });
    }
    for (const [i, run] of started.entries()) {
      assert.equal(await ended(nodes[(i + 1) % 3]!.url, token, run.id), "Completed");
      assert.deepEqual(completedIds(await history(nodes[i % 3]!.url, token, run.id)), [1, 2]);
    }
    const effects = await cluster.effects();
    for (const run of started) {
      assert.deepEqual(effects.get(`${run.key}/1`)?.length, 1, run.key);
      assert.deepEqual(effects.get(`${run.key}/2`)?.length, 1, run.key);
    }
    assert.equal(effects.size, 60);
    // Work ran on every node's workers: the shards are spread.
    const by = new Set([...effects.values()].flat());
    assert.deepEqual([...by].sort(), ["w0", "w1", "w2"]);
  });

  test("SIGKILL of a node mid-load: its shards are taken over, every acknowledged run completes, no activity completes twice", async (t) => {
    const cluster = await clusterFixture(t, { ttlMs: 3000 });
    const nodes = [await cluster.start(0), await cluster.start(1), await cluster.start(2)];
    await cluster.settled();
    await Promise.all([0, 1, 2].map((i) => cluster.worker(i, `w${i}`)));
    const token = await register(cluster, nodes[0]!.url);
    const acknowledged: string[] = [];
    for (let n = 0; n < 45; n++) {
      const r = await startRun(nodes[n % 3]!.url, token, {
        name: "pair",
        input: { k: `k${n}`, ms: 150 },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      acknowledged.push(r.body.workflow_id);
    }
    const before = await cluster.leases();
    const killedShards = before.filter((l) => l.owner === "n2").map((l) => l.shard);
    assert.ok(killedShards.length > 0);
    await nodes[2]!.stop("SIGKILL");
    // The survivors take every shard of n2, each at a new epoch.
    await until("n2's shards taken over", async () => {
      const now = await cluster.leases();
      const taken = killedShards.every((s) => {
        const lease = now.find((l) => l.shard === s);
        return lease?.owner === "n0" || lease?.owner === "n1";
      });
      return taken ? true : undefined;
    });
    const after = await cluster.leases();
    for (const s of killedShards) {
      assert.ok(after[s]!.epoch > before[s]!.epoch, `shard ${s} epoch moved on`);
    }
    for (const [i, id] of acknowledged.entries()) {
      const url = nodes[i % 2]!.url;
      assert.equal(await ended(url, token, id), "Completed");
      const ids = completedIds(await history(url, token, id));
      assert.deepEqual(ids, [1, 2], `run ${id}: each activity completed once`);
    }
  });

  test("after a takeover an in-flight activity runs again as the next attempt, and history says why", async (t) => {
    const cluster = await clusterFixture(t, { ttlMs: 3000 });
    const a = await cluster.start(0);
    const b = await cluster.start(1);
    await cluster.settled();
    await Promise.all([cluster.worker(0, "at-a"), cluster.worker(1, "at-b")]);
    const token = await register(cluster, b.url);
    // No workflow id: the run lands in a shard of a, whose own worker takes the attempt.
    const r = await call(a.url, "POST", "/workflows/start", {
      token,
      body: { name: "pair", input: { k: "killed", ms: 2500 } },
    });
    assert.equal(r.status, 200);
    const id = r.body.workflow_id as string;
    await until("a's worker to start", async () =>
      (await cluster.effects()).get("killed/1")?.includes("at-a") ? true : undefined,
    );
    await a.stop("SIGKILL");
    assert.equal(await ended(b.url, token, id), "Completed");
    // a's worker may still finish attempt 1; b's worker ran the activity as attempt 2.
    const runs = (await cluster.executions()).get("killed/1")!;
    assert.deepEqual(runs[0], { by: "at-a", attempt: 1 });
    assert.deepEqual(
      runs.filter((x) => x.by === "at-b"),
      [{ by: "at-b", attempt: 2 }],
    );
    const events = (await history(b.url, token, id)) as (Event & {
      attempt?: number;
      timeout?: string;
    })[];
    assert.deepEqual(
      events.filter((e) => e.activity_id === 1).map((e) => [e.type, e.attempt, e.timeout]),
      [
        ["ActivityScheduled", 1, undefined],
        ["ActivityTimedOut", 1, "owner_lost"],
        ["ActivityScheduled", 2, undefined],
        ["ActivityCompleted", 2, undefined],
      ],
    );
  });

  test("a node paused (SIGSTOP) past its lease cannot commit after it resumes (fencing)", async (t) => {
    const cluster = await clusterFixture(t, { ttlMs: 3000 });
    const a = await cluster.start(0);
    const b = await cluster.start(1);
    await cluster.settled();
    // Both workers are connected before the run starts: a run whose owner has no worker yet
    // is relayed to the first node that has one, which may be b.
    await Promise.all([cluster.worker(0, "at-a"), cluster.worker(1, "at-b")]);
    const token = await register(cluster, a.url);
    // A start without a workflow id lands in a shard of the node it is sent to: node a, whose
    // own worker takes the attempt.
    const r = await call(a.url, "POST", "/workflows/start", {
      token,
      body: { name: "pair", input: { k: "paused", ms: 2500 } },
    });
    assert.equal(r.status, 200);
    const id = r.body.workflow_id as string;
    const shard = (
      await cluster.sql<{ shard: number }>(
        `SELECT shard FROM "${cluster.schema}".workflow_runs WHERE workflow_id = $1`,
        [id],
      )
    )[0]!.shard;
    // Node a's worker is executing the first activity when a stops.
    await until("a's worker to start", async () =>
      (await cluster.effects()).get("paused/1")?.includes("at-a") ? true : undefined,
    );
    a.child.kill("SIGSTOP");
    // b takes the shard (new epoch), recovers the run and dispatches the attempt to its worker.
    await until("b to take the shard", async () =>
      (await cluster.leases())[shard]?.owner === "n1" ? true : undefined,
    );
    await until("b's worker to run the attempt again", async () =>
      (await cluster.effects()).get("paused/1")?.includes("at-b") ? true : undefined,
    );
    // As the next attempt: a's worker ran attempt 1 and may still report it.
    assert.deepEqual((await cluster.executions()).get("paused/1"), [
      { by: "at-a", attempt: 1 },
      { by: "at-b", attempt: 2 },
    ]);
    // b's worker completes the run while a is still stopped.
    assert.equal(await ended(b.url, token, id), "Completed");
    const recorded = await history(b.url, token, id);
    // a's worker finished long ago; its result waits in a's socket until a resumes, and a
    // still holds the run in memory at the old epoch.
    a.child.kill("SIGCONT");
    // Once a serves shards again it has run a lease round since resuming, and read its socket.
    await until("a to own shards again", async () =>
      (await cluster.leases()).some((l) => l.owner === "n0") ? true : undefined,
    );
    await until("a to log the loss", async () =>
      /shard lease lost|shard_fenced/.test(a.stdout() + a.stderr()) ? true : undefined,
    );
    // Nothing a had in flight reached history: exactly b's two completions.
    const events = await history(b.url, token, id);
    assert.deepEqual(events, recorded);
    const completions = events.filter((e) => e.type === "ActivityCompleted");
    assert.deepEqual(
      completions.map((e) => [e.activity_id, e.output?.by]),
      [
        [1, "at-b"],
        [2, "at-b"],
      ],
    );
  });

  test("a joining node takes the shards rendezvous hashing gives it; the others keep theirs; ceiling shares follow", async (t) => {
    const quota = 10;
    const cluster = await clusterFixture(t, { shards: 32, quota });
    const nodes = [await cluster.start(0), await cluster.start(1)];
    const two = desiredOwners(["n0", "n1"], 32);
    await until("n0 and n1 to own their shards", async () => {
      const leases = await cluster.leases();
      return leases.every((l) => l.owner === two[l.shard]) ? true : undefined;
    });
    const epochs = (await cluster.leases()).map((l) => l.epoch);
    await checkShares(cluster, nodes, quota, 32);
    nodes.push(await cluster.start(2));
    const three = desiredOwners(["n0", "n1", "n2"], 32);
    await until("n2 to own its shards", async () => {
      const leases = await cluster.leases();
      return leases.every((l) => l.owner === three[l.shard]) ? true : undefined;
    });
    const leases = await cluster.leases();
    for (const lease of leases) {
      // Moved shards were handed over (a new epoch); the others were never touched.
      if (two[lease.shard] === three[lease.shard]) assert.equal(lease.epoch, epochs[lease.shard]);
      else assert.ok(lease.epoch > epochs[lease.shard]!);
    }
    assert.ok(leases.some((l) => l.owner === "n2"));
    await checkShares(cluster, nodes, quota, 32);
  });

  test("an intervention sent to a node that does not hold the agent connection is Applied; a stale one is StaleTarget", async (t) => {
    const model = await startScriptedModel();
    t.after(() => model.close());
    const cluster = await clusterFixture(t);
    const a = await cluster.start(0);
    const b = await cluster.start(1);
    await cluster.settled();
    const token = await cluster.token();
    const definition =
      "name: ask\ntask_queue: agents\nretry: { max_attempts: 1 }\n" +
      "steps:\n  - { id: a, call: { action: assistant, input: input.q } }\noutput: steps.a\n";
    const registered = await call(a.url, "POST", "/workflows/definitions", {
      token,
      body: { definition },
    });
    assert.equal(registered.status, 200);
    // The agent worker (and so its agent-transport connection) is at node a only.
    await cluster.agentWorker(0, model.url);
    // The model call is slow enough for the attempt to be live while it is listed and
    // steered through another node, even on a loaded machine; then the run completes.
    model.push(
      { tool_calls: [{ id: "c1", name: "echo", arguments: '{"x":1}' }], delay_ms: 5000 },
      { content: "ok" },
    );
    const started = await call(a.url, "POST", "/workflows/start", {
      token,
      body: { name: "ask", input: { q: "hello" } },
    });
    assert.equal(started.status, 200);
    const id = started.body.workflow_id as string;
    await until("the model call", async () => (model.requests.length >= 1 ? true : undefined));
    const attempt = await until("a live attempt at a", async () => {
      const r = await call(a.url, "POST", "/workflows/attempts", {
        token,
        body: { workflow_id: id },
      });
      return r.body.attempts?.[0] as
        | { run_id: string; activity_id: number; attempt: number }
        | undefined;
    });
    const intervene = async (url: string, n: number) => {
      const r = await call(url, "POST", "/workflows/intervene", {
        token,
        body: {
          workflow_id: id,
          run_id: attempt.run_id,
          activity_id: attempt.activity_id,
          attempt: n,
          kind: { kind: "InjectMessage", text: "via b", priority: { priority: "Normal" } },
        },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.outcome.outcome as string;
    };
    // Listed from a node without the connection too (each node adds what it holds).
    const listed = await call(b.url, "POST", "/workflows/attempts", {
      token,
      body: { workflow_id: id },
    });
    assert.deepEqual(
      listed.body.attempts.map((x: typeof attempt) => [x.run_id, x.attempt]),
      [[attempt.run_id, attempt.attempt]],
    );
    // An attempt that does not exist is stale on every node.
    assert.equal(await intervene(b.url, attempt.attempt + 1), "StaleTarget");
    assert.equal(await intervene(b.url, attempt.attempt), "Applied");
    assert.equal(await ended(b.url, token, id), "Completed");
    assert.equal(model.requests[1]!.messages.at(-1)!.content, "via b");
  });

  test("deployments: a record with node runs only on that node, node null on every node; each node shows its own processes", async (t) => {
    const cluster = await clusterFixture(t, { toml: "[deployments]\nenabled = true" });
    const nodes = [await cluster.start(0), await cluster.start(1), await cluster.start(2)];
    const token = await cluster.token();
    const { document: doc, token: tokenFile } = await cluster.workerFiles("deployed");
    const record = (node?: string) => ({
      artifact: {
        type: "builtin",
        verb: [
          "worker",
          "module",
          doc,
          "--endpoint",
          nodes[0]!.grpc!,
          "--token-file",
          tokenFile,
          "--namespace",
          "home",
        ],
      },
      namespaces: ["home"],
      task_queue: "q",
      desired: "running",
      ...(node === undefined ? {} : { node }),
    });
    type Managed = { name: string; runs_here: boolean; state: string; pid: number | null };
    const managed = async (i: number, name: string): Promise<Managed | undefined> => {
      const r = await call(nodes[i]!.url, "GET", "/workers/managed", { token });
      assert.equal(r.status, 200);
      assert.equal(r.body.node_id, `n${i}`);
      return (r.body.managed as Managed[]).find((m) => m.name === name);
    };
    const put = await call(nodes[0]!.url, "PUT", "/worker-deployments/everywhere", {
      token,
      body: record(),
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    // node null: every node runs its own process.
    const pids = await until("a process on every node", async () => {
      const all = await Promise.all([0, 1, 2].map((i) => managed(i, "everywhere")));
      return all.every((m) => m?.state === "running" && m.pid !== null)
        ? all.map((m) => m!.pid)
        : undefined;
    });
    assert.equal(new Set(pids).size, 3);
    const pinned = await call(nodes[2]!.url, "PUT", "/worker-deployments/pinned", {
      token,
      body: record("n1"),
    });
    assert.equal(pinned.status, 200, JSON.stringify(pinned.body));
    await until("the pinned record running on n1", async () =>
      (await managed(1, "pinned"))?.state === "running" ? true : undefined,
    );
    for (const i of [0, 2]) {
      const m = await managed(i, "pinned");
      assert.deepEqual([m?.runs_here, m?.pid], [false, null]);
    }
    // Deleted on one node: every node's process stops.
    const deleted = await call(nodes[1]!.url, "DELETE", "/worker-deployments/everywhere", {
      token,
    });
    assert.equal(deleted.status, 200);
    await until("every node's process to stop", async () =>
      pids.every((pid) => {
        try {
          process.kill(pid!, 0);
          return false;
        } catch {
          return true;
        }
      })
        ? true
        : undefined,
    );
  });

  test("a worker connected to one node receives tasks of every shard (relayed from the owner)", async (t) => {
    const cluster = await clusterFixture(t);
    const a = await cluster.start(0);
    const b = await cluster.start(1);
    const c = await cluster.start(2);
    await cluster.settled();
    await cluster.worker(0, "only-at-a");
    const token = await register(cluster, a.url);
    const started: { id: string; key: string }[] = [];
    for (let n = 0; n < 12; n++) {
      // Sent to b and c, so the runs live in their shards; their workers are all at a.
      const r = await startRun([b, c][n % 2]!.url, token, {
        name: "pair",
        input: { k: `r${n}`, ms: 0 },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      started.push({ id: r.body.workflow_id, key: `r${n}` });
    }
    const shards = await cluster.sql<{ shard: number }>(
      `SELECT shard FROM "${cluster.schema}".workflow_runs`,
    );
    const leases = await cluster.leases();
    assert.ok(
      shards.every((s) => leases[s.shard]?.owner !== "n0"),
      "no run is in a's shards",
    );
    for (const run of started) {
      assert.equal(await ended(b.url, token, run.id), "Completed");
      assert.deepEqual(completedIds(await history(c.url, token, run.id)), [1, 2]);
    }
    // The relay routes are node to node: the admin bearer is refused (node-credential.test.ts
    // tries every other), and a node credential's body that is not an offer is a 400.
    const key = await loadSigningKey(join(cluster.dir, "n0", "data"));
    const node = await issueNodeToken(key.privateKey, "n1", 60);
    const offer = { owner: "n1", task: { nonsense: true } };
    const refused = await call(a.url, "POST", "/cluster/relay/offer", { token, body: offer });
    assert.equal(refused.status, 403);
    const bad = await call(a.url, "POST", "/cluster/relay/offer", { token: node, body: offer });
    assert.equal(bad.status, 400);
    const effects = await cluster.effects();
    for (const run of started) {
      assert.deepEqual(effects.get(`${run.key}/1`), ["only-at-a"]);
      assert.deepEqual(effects.get(`${run.key}/2`), ["only-at-a"]);
    }
  });

  test("an attempt relayed to a node that dies is retried elsewhere", async (t) => {
    const cluster = await clusterFixture(t, { ttlMs: 3000 });
    const a = await cluster.start(0);
    const b = await cluster.start(1);
    await cluster.start(2);
    await cluster.settled();
    await cluster.worker(0, "at-a");
    const token = await register(cluster, b.url);
    const r = await startRun(b.url, token, { name: "pair", input: { k: "lost", ms: 60_000 } });
    assert.equal(r.status, 200);
    const id = r.body.workflow_id as string;
    await until("a's worker to run the attempt", async () =>
      (await cluster.effects()).get("lost/1")?.includes("at-a") ? true : undefined,
    );
    await a.stop("SIGKILL");
    // The only other worker connects to c; b's relayed attempt is detached once a has left,
    // and after the engine's grace it is retried, this time at c.
    await cluster.worker(2, "at-c");
    await until(
      "the attempt to run again at c",
      async () => ((await cluster.effects()).get("lost/1")?.includes("at-c") ? true : undefined),
      60_000,
    );
    // History shows the first attempt lost with its worker and a second one scheduled.
    await until("the retry in history", async () => {
      const events = (await history(b.url, token, id)) as (Event & { attempt?: number })[];
      const scheduled = events.filter((e) => e.type === "ActivityScheduled" && e.activity_id === 1);
      return scheduled.map((e) => e.attempt).join() === "1,2" ? true : undefined;
    });
  });
});
