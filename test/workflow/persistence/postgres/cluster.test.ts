// The cluster's rows on PostgreSQL as a specification: the shard count fixed at creation,
// incarnations, leases granted by compare-and-swap with a new epoch, renewal of every lease
// in one statement, release only at the epoch held, and fencing: a shard store whose lease
// moved on (or expired) cannot commit, and writes nothing. Time passing is simulated by
// moving `expires_at` into the past, exactly what the database clock would do.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import type { RunAppend } from "../../../../src/workflow/engine/store.ts";
import type { ClusterTables } from "../../../../src/workflow/persistence/postgres/cluster.ts";
import { PostgresWorkflowStore } from "../../../../src/workflow/persistence/postgres/store.ts";
import { POSTGRES_URL, postgresRequired } from "../../../support/postgres.ts";

const skip = await postgresRequired();

const V = `sha256:${"ab".repeat(32)}`;

function startOf(runId: string): RunAppend {
  return {
    runId,
    workflowId: `wf-${runId}`,
    namespace: "ns",
    definitionVersion: V,
    status: "Running",
    events: [
      {
        type: "RunStarted",
        at: 1,
        workflow_id: `wf-${runId}`,
        definition_version: V,
        input_json: "{}",
      },
    ],
    outbox: [{ activityId: 1, attempt: 1, state: "pending" }],
  };
}

describe("cluster rows on PostgreSQL", { skip }, () => {
  let admin: pg.Client;
  const schemas: string[] = [];
  const stores: PostgresWorkflowStore[] = [];
  before(async () => {
    admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
  });
  after(async () => {
    for (const store of stores) await store.close();
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });

  async function cluster(shards = 4): Promise<{
    store: PostgresWorkflowStore;
    tables: ClusterTables;
    schema: string;
    expire: (shard: number) => Promise<void>;
  }> {
    const schema = `skein_test_${randomBytes(6).toString("hex")}`;
    schemas.push(schema);
    const store = await PostgresWorkflowStore.open(POSTGRES_URL, schema);
    stores.push(store);
    const tables = store.cluster.tables(60_000);
    assert.equal(await tables.ensureShards(shards), shards);
    const expire = async (shard: number) => {
      await admin.query(
        `UPDATE "${schema}".shard_leases SET expires_at = clock_timestamp() - interval '1 second' WHERE shard = $1`,
        [shard],
      );
    };
    return { store, tables, schema, expire };
  }

  test("the shard count is fixed when the cluster is created; another count is refused", async () => {
    const { store, tables, schema } = await cluster(4);
    const { rows } = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".shard_leases`);
    assert.equal(rows[0].n, 4);
    assert.equal(await tables.ensureShards(4), 4);
    await assert.rejects(
      store.cluster.tables(1000).ensureShards(8),
      (e: Error & { code: string }) => {
        assert.equal(e.code, "storage_unavailable");
        assert.match(e.message, /has 4 shards; this node is configured with cluster.shards = 8/);
        return true;
      },
    );
  });

  test("a node that joins again gets the next incarnation; the older one's heartbeat fails", async () => {
    const { tables } = await cluster();
    const first = await tables.join("a", "http://127.0.0.1:1");
    const second = await tables.join("a", "http://127.0.0.1:2");
    assert.equal(second.incarnation, first.incarnation + 1n);
    assert.equal(await tables.heartbeat(first), false);
    assert.equal(await tables.heartbeat(second), true);
    const seen = await tables.observe();
    assert.deepEqual(
      seen.nodes.map((n) => [n.nodeId, n.httpUrl]),
      [["a", "http://127.0.0.1:2"]],
    );
  });

  test("claims are compare-and-swap: free shards are granted at epoch + 1, held ones are not", async () => {
    const { tables, expire } = await cluster();
    const a = await tables.join("a", "http://a");
    const b = await tables.join("b", "http://b");
    assert.deepEqual(
      await tables.claim(a, [0, 1]),
      new Map([
        [0, { epoch: 1n, from: null }],
        [1, { epoch: 1n, from: null }],
      ]),
    );
    // Unexpired leases of another node are not taken.
    assert.deepEqual(await tables.claim(b, [0, 1, 2]), new Map([[2, { epoch: 1n, from: null }]]));
    // Once a lease expires, the takeover increments the epoch and names the node it was a's.
    await expire(1);
    assert.deepEqual(await tables.claim(b, [1]), new Map([[1, { epoch: 2n, from: "a" }]]));
    // The old owner's renewal no longer includes it (one statement renews all its leases).
    assert.deepEqual(await tables.renew(a), new Map([[0, 1n]]));
    assert.deepEqual(
      await tables.renew(b),
      new Map([
        [1, 2n],
        [2, 1n],
      ]),
    );
  });

  test("an earlier incarnation's leases are taken over at once by the restarted node", async () => {
    const { tables } = await cluster();
    const before = await tables.join("a", "http://a");
    await tables.claim(before, [3]);
    const restarted = await tables.join("a", "http://a");
    assert.deepEqual(await tables.claim(restarted, [3]), new Map([[3, { epoch: 2n, from: "a" }]]));
  });

  test("release gives a shard back only at the epoch held", async () => {
    const { tables, expire } = await cluster();
    const a = await tables.join("a", "http://a");
    const b = await tables.join("b", "http://b");
    await tables.claim(a, [0]);
    await expire(0);
    await tables.claim(b, [0]); // epoch 2, b's
    await tables.release(a, new Map([[0, 1n]]));
    const lease = (await tables.observe()).leases[0]!;
    assert.equal(lease.owner, "b");
    assert.equal(lease.epoch, 2n);
    await tables.release(b, new Map([[0, 2n]]));
    // Released: expired at once, still naming its last holder for the next claim.
    const released = (await tables.observe()).leases[0]!;
    assert.deepEqual([released.owner, released.expiresInMs <= 0], ["b", true]);
    assert.deepEqual(await tables.claim(a, [0]), new Map([[0, { epoch: 3n, from: "b" }]]));
  });

  test("fencing: a shard store whose lease moved on cannot commit, and writes nothing", async () => {
    const { store, tables, schema, expire } = await cluster();
    const a = await tables.join("a", "http://a");
    const b = await tables.join("b", "http://b");
    const epochA = (await tables.claim(a, [2])).get(2)!.epoch;
    const storeA = store.cluster.shardRuns({ shard: 2, ...a, epoch: epochA });
    await storeA.commit([startOf("r1")]);
    await expire(2);
    const epochB = (await tables.claim(b, [2])).get(2)!.epoch;
    assert.equal(epochB, epochA + 1n);
    await assert.rejects(storeA.commit([startOf("r2")]), { code: "shard_fenced" });
    const storeB = store.cluster.shardRuns({ shard: 2, ...b, epoch: epochB });
    await storeB.commit([startOf("r3")]);
    const { rows } = await admin.query(
      `SELECT run_id, shard FROM "${schema}".workflow_runs ORDER BY run_id`,
    );
    assert.deepEqual(rows, [
      { run_id: "r1", shard: 2 },
      { run_id: "r3", shard: 2 },
    ]);
    const outbox = await admin.query(
      `SELECT run_id FROM "${schema}".workflow_outbox ORDER BY run_id`,
    );
    assert.deepEqual(
      outbox.rows.map((r) => r.run_id),
      ["r1", "r3"],
    );
    // The new owner loads the shard's runs, the old one's included.
    assert.deepEqual(
      (await storeB.loadRunning()).map((r) => r.runId),
      ["r1", "r3"],
    );
    assert.deepEqual(
      (await storeB.loadOutbox()).map((r) => r.runId),
      ["r1", "r3"],
    );
  });

  test("fencing: an expired lease cannot commit even before anyone takes it over", async () => {
    const { store, tables, expire } = await cluster();
    const a = await tables.join("a", "http://a");
    const epoch = (await tables.claim(a, [1])).get(1)!.epoch;
    const storeA = store.cluster.shardRuns({ shard: 1, ...a, epoch });
    await expire(1);
    await assert.rejects(storeA.commit([startOf("late")]), { code: "shard_fenced" });
    assert.deepEqual(await storeA.loadRunning(), []);
  });

  test("a shard store loads only its own shard's runs", async () => {
    const { store, tables } = await cluster();
    const a = await tables.join("a", "http://a");
    const granted = await tables.claim(a, [0, 1]);
    const s0 = store.cluster.shardRuns({ shard: 0, ...a, epoch: granted.get(0)!.epoch });
    const s1 = store.cluster.shardRuns({ shard: 1, ...a, epoch: granted.get(1)!.epoch });
    await s0.commit([startOf("zero")]);
    await s1.commit([startOf("one")]);
    assert.deepEqual(
      (await s0.loadRunning()).map((r) => r.runId),
      ["zero"],
    );
    assert.deepEqual(
      (await s1.loadRunning()).map((r) => r.runId),
      ["one"],
    );
    assert.equal(await store.cluster.runShard("ns", "wf-one"), 1);
    assert.equal(await store.cluster.runShardById("zero"), 0);
    assert.equal(await store.cluster.runShard("ns", "wf-none"), undefined);
  });
});
