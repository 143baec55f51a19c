// The outbox dispatcher on its own: the per-node share of a namespace quota (with shard
// counts where rounding makes the cluster total exceed the quota), the ceiling on claimed
// rows, placement freeing a claim, no ceiling when disabled, paused runs held back, and the
// row writes it reports for the commit.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { nodeShare, Outbox, type OutboxEntry } from "../../../src/workflow/engine/outbox.ts";

describe("nodeShare: ceil(quota × owned / total)", () => {
  const rows: [quota: number, owned: number, total: number, share: number][] = [
    [1024, 1, 1, 1024],
    [1024, 3, 3, 1024],
    [1024, 1, 3, 342],
    [1024, 2, 3, 683],
    [10, 1, 4, 3],
    [10, 3, 4, 8],
    [1, 1, 1000, 1],
    [0, 1, 2, 0],
    [1024, 0, 3, 0],
  ];
  for (const [quota, owned, total, share] of rows) {
    test(`quota ${quota}, ${owned} of ${total} shards: ${share}`, () => {
      assert.equal(nodeShare(quota, owned, total), share);
    });
  }

  const clusters: [quota: number, ownedPerNode: number[], total: number, sum: number][] = [
    // Three nodes of one shard each: 3 × 342 = 1026 > 1024.
    [1024, [1, 1, 1], 3, 1026],
    // Four nodes of one shard each: 4 × 3 = 12 > 10.
    [10, [1, 1, 1, 1], 4, 12],
    // 1000 nodes of one shard: each gets 1; 1000 > 1.
    [1, Array(1000).fill(1), 1000, 1000],
  ];
  for (const [quota, nodes, total, sum] of clusters) {
    test(`rounding: ${nodes.length} nodes on quota ${quota} claim ${sum} in all (more than the quota)`, () => {
      const total_ = nodes.reduce((a, owned) => a + nodeShare(quota, owned, total), 0);
      assert.equal(total_, sum);
      assert.ok(total_ > quota);
    });
  }

  for (const [quota, owned, total] of [
    [-1, 1, 1],
    [1.5, 1, 1],
    [10, 2, 1],
    [10, 1, 0],
    [10, -1, 2],
  ] as const) {
    test(`refuses quota ${quota}, ${owned} of ${total}`, () => {
      assert.throws(() => nodeShare(quota, owned, total), RangeError);
    });
  }
});

interface Harness {
  outbox: Outbox<string>;
  writes: string[];
  queued: OutboxEntry<string>[];
  paused: Set<string>;
}

function harness(enabled: boolean, maxInFlight: number, placeAtOnce: number): Harness {
  const writes: string[] = [];
  const queued: OutboxEntry<string>[] = [];
  const paused = new Set<string>();
  let free = placeAtOnce;
  const outbox = new Outbox<string>(
    { enabled, maxInFlight },
    {
      ready: (e) => !paused.has(e.runId),
      handOff: (e) => {
        if (free > 0) {
          free--;
          return "placed";
        }
        queued.push(e);
        return "queued";
      },
      record: (e, state) => writes.push(`${e.key} ${state}`),
    },
  );
  return { outbox, writes, queued, paused };
}

const entry = (runId: string, n: number): OutboxEntry<string> => ({
  key: `${runId}/${n}/1`,
  namespace: "ns",
  runId,
  activityId: n,
  attempt: 1,
  owner: runId,
});

describe("Outbox", () => {
  test("never claims more than the ceiling; a placement frees a claim for the next row", () => {
    const h = harness(true, 3, 0);
    for (let n = 1; n <= 10; n++) h.outbox.add(entry("r", n));
    assert.equal(h.outbox.claimed("ns"), 3);
    assert.equal(h.outbox.waiting("ns"), 7);
    assert.deepEqual(
      h.queued.map((e) => e.activityId),
      [1, 2, 3],
    );
    h.outbox.placed("r/2/1");
    assert.equal(h.outbox.claimed("ns"), 3);
    assert.deepEqual(
      h.queued.map((e) => e.activityId),
      [1, 2, 3, 4],
    );
    assert.equal(h.outbox.maxClaimed, 3);
    assert.deepEqual(h.writes.slice(-2), ["r/2/1 done", "r/4/1 claimed"]);
  });

  test("rows placed at once are done in the same turn and never pile up", () => {
    const h = harness(true, 2, 100);
    for (let n = 1; n <= 50; n++) h.outbox.add(entry("r", n));
    assert.equal(h.outbox.claimed("ns"), 0);
    assert.equal(h.outbox.maxClaimed, 1);
    assert.equal(h.writes.filter((w) => w.endsWith("done")).length, 50);
  });

  test("disabled: no ceiling applies", () => {
    const h = harness(false, 2, 0);
    for (let n = 1; n <= 50; n++) h.outbox.add(entry("r", n));
    assert.equal(h.outbox.claimed("ns"), 50);
    assert.equal(h.outbox.waiting("ns"), 0);
  });

  test("namespaces have their own ceilings", () => {
    const h = harness(true, 2, 0);
    for (let n = 1; n <= 5; n++) {
      h.outbox.add(entry("r", n));
      h.outbox.add({ ...entry("s", n), namespace: "other" });
    }
    assert.equal(h.outbox.claimed("ns"), 2);
    assert.equal(h.outbox.claimed("other"), 2);
  });

  test("a paused run's rows are held without a claim until it resumes", () => {
    const h = harness(true, 5, 0);
    h.paused.add("p");
    h.outbox.add(entry("p", 1));
    h.outbox.add(entry("r", 1));
    assert.equal(h.outbox.claimed("ns"), 1);
    assert.equal(h.outbox.waiting("ns"), 1);
    h.paused.delete("p");
    h.outbox.resume("p");
    assert.equal(h.outbox.claimed("ns"), 2);
  });

  test("a dropped row is closed (done) and frees its claim", () => {
    const h = harness(true, 1, 0);
    h.outbox.add(entry("r", 1));
    h.outbox.add(entry("r", 2));
    h.outbox.drop("r/2/1");
    h.outbox.drop("r/1/1");
    assert.equal(h.outbox.claimed("ns"), 0);
    assert.equal(h.outbox.waiting("ns"), 0);
    assert.deepEqual(h.writes, ["r/1/1 claimed", "r/2/1 done", "r/1/1 done"]);
  });
});
