// Joins and leaves under outbox load, with the ceiling share checked at every step. No worker
// serves the queue, so every claim waits in its node's matcher and nothing but a change of
// ownership can lower it. Each sample is one GET /cluster answer, whose claims and share are
// read together: at every sample a node claims at most ceil(quota × s / S) per namespace.
// Lease rounds are made rare (TTL 10 min: a periodic round every 200 s), so shards can move
// only through the rounds a join, a release or a finished recovery triggers: the join and the
// leave complete long before any periodic round could help.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { desiredOwners } from "../../../src/workflow/cluster/rendezvous.ts";
import { runShard } from "../../../src/workflow/cluster/shard-engines.ts";
import { postgresRequired } from "../../support/postgres.ts";
import { call, type ServerProcess } from "../support/server.ts";
import { type ClusterFixture, clusterFixture, until } from "./nodes.ts";

const skip = await postgresRequired();

const QUOTA = 8;
const SHARDS = 16;
const FAN = `name: fan
task_queue: q
steps:
  - id: each
    collect:
      items: "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
      step: { id: one, call: { action: effect, input: "{ 'key': $string(item) }" } }
`;

interface Status {
  node_id: string;
  owned: number[];
  ceiling_share: number;
  claimed: Record<string, number>;
}

/** GET /cluster of `node`, with the ceiling invariant checked on the answer. */
async function sample(node: ServerProcess, token: string): Promise<Status | undefined> {
  const r = await call(node.url, "GET", "/cluster", { token }).catch(() => undefined);
  if (r?.status !== 200) return undefined;
  const status = r.body as Status;
  const claimed = status.claimed.home ?? 0;
  assert.ok(
    claimed <= status.ceiling_share,
    `${status.node_id} claims ${claimed} rows against a share of ${status.ceiling_share}`,
  );
  return status;
}

/** Starts `count` fan runs whose shards rendezvous hashing gives `owner` among `nodes`. */
async function startIn(
  cluster: ClusterFixture,
  url: string,
  owner: string,
  nodes: string[],
  count: number,
): Promise<void> {
  const token = await cluster.token();
  const want = desiredOwners(nodes, SHARDS);
  for (let started = 0; started < count; ) {
    const id = crypto.randomUUID();
    if (want[runShard("home", id, SHARDS)] !== owner) continue;
    const r = await call(url, "POST", "/workflows/start", {
      token,
      body: { name: "fan", workflow_id: id },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    started++;
  }
}

describe("ceiling shares while shards move", { skip }, () => {
  test("a join and a leave keep every node within ceil(quota × s / S) at every step", async (t) => {
    const cluster = await clusterFixture(t, {
      shards: SHARDS,
      quota: QUOTA,
      ttlMs: 600_000,
      toml: "[outbox]\nenabled = true",
    });
    const n0 = await cluster.start(0);
    const token = await cluster.token();
    const defined = await call(n0.url, "POST", "/workflows/definitions", {
      token,
      body: { definition: FAN },
    });
    assert.equal(defined.status, 200, JSON.stringify(defined.body));
    // n0 alone claims its whole share from runs in shards it keeps after n1 joins...
    await startIn(cluster, n0.url, "n0", ["n0", "n1"], 2);
    await until("n0 to claim its share", async () =>
      (await sample(n0, token))?.claimed.home === QUOTA ? true : undefined,
    );
    // ...and rows wait in the shards that will move to n1.
    await startIn(cluster, n0.url, "n1", ["n0", "n1"], 2);

    const n1 = await cluster.start(1);
    const two = desiredOwners(["n0", "n1"], SHARDS);
    await until("the join to end with both shares in use", async () => {
      // The node gaining shards is read first: its share only grows during a join, the
      // other's only shrinks, so the two samples add up to no more than one moment's sum.
      const gaining = await sample(n1, token);
      const losing = await sample(n0, token);
      if (gaining === undefined || losing === undefined) return undefined;
      assert.ok(gaining.ceiling_share + losing.ceiling_share <= QUOTA + 1);
      const leases = await cluster.leases();
      const balanced =
        leases.every((l) => l.owner === two[l.shard]) &&
        [gaining, losing].every(
          (s) =>
            JSON.stringify(s.owned) ===
            JSON.stringify(leases.filter((l) => l.owner === s.node_id).map((l) => l.shard)),
        );
      if (!balanced) return undefined;
      // Rows wait on both sides, so each node claims its whole share again.
      const full = (s: Status) =>
        s.ceiling_share === Math.ceil((QUOTA * s.owned.length) / SHARDS) &&
        s.claimed.home === s.ceiling_share;
      return full(gaining) && full(losing) ? true : undefined;
    });

    // n1 leaves (SIGTERM): its share drops to nothing before it hands its shards back.
    const leaving = n1.stop("SIGTERM");
    await until("n0 to serve every shard and claim its whole share again", async () => {
      await sample(n1, token);
      const status = await sample(n0, token);
      return status?.owned.length === SHARDS && status.claimed.home === QUOTA ? true : undefined;
    });
    await leaving;
  });
});
