// The node's ceiling share shared by its shards' outboxes: real Outbox instances (one per
// owned shard) drawing on one NodeClaimBudget never claim more than ceil(quota × s / S) in a
// namespace together; a freed claim lets another shard's outbox claim; the share follows the
// node's ownership, down as well as up (claims past a smaller share are given back at once,
// and a handover waits for those that cannot be); a shard that leaves gives its claims back;
// namespaces are separate.

import assert from "node:assert/strict";
import { test } from "node:test";
import { NodeClaimBudget } from "../../../src/workflow/cluster/claim-budget.ts";
import { Outbox, type OutboxEntry } from "../../../src/workflow/engine/outbox.ts";

type Entry = OutboxEntry<null>;

/** `running`: keys a worker holds already (they cannot be given back). */
function shardOutbox(budget: NodeClaimBudget, enabled = true, running = new Set<string>()) {
  const share = budget.share();
  const handedOff: Entry[] = [];
  const outbox = new Outbox<null>(
    { enabled, maxInFlight: 1_000_000, budget: share.budget },
    {
      ready: () => true,
      // Workers are busy: every hand-off waits for a slot, holding its claim.
      handOff: (e) => {
        handedOff.push(e);
        return "queued";
      },
      record: () => {},
      withdraw: (e) => {
        if (running.has(e.key)) return false;
        handedOff.splice(handedOff.indexOf(e), 1);
        return true;
      },
    },
  );
  let n = 0;
  const add = (namespace: string, count: number) => {
    for (let i = 0; i < count; i++) {
      const key = `${namespace}/${n++}/${Math.random()}`;
      outbox.add({ key, namespace, runId: key, activityId: 1, attempt: 1, owner: null });
    }
  };
  return { outbox, share, handedOff, add };
}

test("shards of one node together claim at most ceil(quota × owned / total)", () => {
  const budget = new NodeClaimBudget(10, 4);
  budget.owned(3); // ceil(10 × 3 / 4) = 8
  assert.equal(budget.ceiling, 8);
  const shards = [shardOutbox(budget), shardOutbox(budget), shardOutbox(budget)];
  for (const s of shards) s.add("ns", 5);
  assert.equal(budget.claimed("ns"), 8);
  assert.equal(
    shards.reduce((sum, s) => sum + s.outbox.claimed("ns"), 0),
    8,
  );
  // Another namespace has its own ceiling.
  shards[0]!.add("other", 9);
  assert.equal(budget.claimed("other"), 8);
});

test("a claim freed in one shard lets another shard's waiting row be claimed", () => {
  const budget = new NodeClaimBudget(2, 2);
  budget.owned(2);
  const a = shardOutbox(budget);
  const b = shardOutbox(budget);
  a.add("ns", 2);
  b.add("ns", 1);
  assert.equal(a.outbox.claimed("ns"), 2);
  assert.equal(b.outbox.claimed("ns"), 0);
  a.outbox.placed(a.handedOff[0]!.key);
  assert.equal(b.outbox.claimed("ns"), 1);
  assert.equal(budget.claimed("ns"), 2);
});

test("the share follows ownership: more shards, more claims at once", () => {
  const budget = new NodeClaimBudget(16, 16);
  budget.owned(1);
  const a = shardOutbox(budget);
  a.add("ns", 10);
  assert.equal(a.outbox.claimed("ns"), 1);
  budget.owned(8);
  assert.equal(a.outbox.claimed("ns"), 8);
});

test("a shard that leaves the node gives its claims back to the others", () => {
  const budget = new NodeClaimBudget(4, 2);
  budget.owned(1); // 2
  const a = shardOutbox(budget);
  const b = shardOutbox(budget);
  a.add("ns", 2);
  b.add("ns", 2);
  assert.equal(b.outbox.claimed("ns"), 0);
  a.share.leave();
  assert.equal(b.outbox.claimed("ns"), 2);
});

test("with the outbox disabled there is no ceiling at all", () => {
  const budget = new NodeClaimBudget(1, 4);
  budget.owned(1);
  const a = shardOutbox(budget, false);
  a.add("ns", 5);
  assert.equal(budget.ceiling, 1);
  assert.equal(a.outbox.claimed("ns"), 5);
  assert.equal(a.handedOff.length, 5);
});

test("a smaller share gives back at once the claims past it that wait for a worker", () => {
  const budget = new NodeClaimBudget(8, 16);
  budget.owned(16);
  const a = shardOutbox(budget);
  const b = shardOutbox(budget);
  a.add("ns", 10);
  b.add("ns", 10);
  assert.equal(budget.claimed("ns"), 8);
  // Half the shards are handed over: the share is 4, and so are the claims, before anything moves.
  budget.owned(8);
  assert.equal(budget.ceiling, 4);
  assert.equal(budget.claimed("ns"), 4);
  assert.equal(budget.excess(), 0);
  assert.equal(a.handedOff.length + b.handedOff.length, 4);
  assert.equal(a.outbox.waiting("ns") + b.outbox.waiting("ns"), 16);
  // Rows given back are claimed again, first, once the share allows.
  budget.owned(16);
  assert.equal(budget.claimed("ns"), 8);
  assert.deepEqual(budget.claims(), new Map([["ns", 8]]));
});

test("a handover waits until claims that cannot be given back are placed", async () => {
  const budget = new NodeClaimBudget(4, 2);
  budget.owned(2);
  const running = new Set<string>();
  const a = shardOutbox(budget, true, running);
  a.add("ns", 4);
  for (const e of a.handedOff) running.add(e.key);
  budget.owned(1);
  // The share is 2, but a worker may hold every claim: nothing can be given back.
  assert.equal(budget.claimed("ns"), 4);
  assert.equal(budget.excess(), 2);
  let fits = false;
  const waiting = budget.fits(600_000).then(() => {
    fits = true;
  });
  a.outbox.placed(a.handedOff[0]!.key);
  await new Promise((done) => setImmediate(done));
  assert.equal(fits, false);
  a.outbox.placed(a.handedOff[1]!.key);
  await waiting;
  assert.equal(budget.claimed("ns"), 2);
});
