import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import { NodeSweep } from "../../../src/store/engine/gc.ts";
import type { Receipt } from "../../../src/store/engine/index.ts";
import { nodeAddress } from "../../../src/store/tree/hash.ts";
import { freshStore } from "./fixture.ts";
import { GatedWriter } from "./gated-writer.ts";

const main = { collection: "p", branch: "main" };

function isInternalError(error: unknown): true {
  assert.ok(error instanceof SkeinError, String(error));
  assert.equal(error.code, "internal_error", error.message);
  return true;
}

/** Lets promise callbacks and a few turns of the event loop run. */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe("commit pipeline", async () => {
  const { store: first, reopen } = await freshStore();
  first.createCollection("p");

  test("receipts settle in commit order with several commits in flight, and all are durable", async () => {
    const store = first;
    const settled: number[] = [];
    const pending: Promise<Receipt>[] = [];
    for (let i = 0; i < 12; i++) {
      const records = [
        { key: `k${i % 3}`, value: i },
        { key: `n${i}`, value: i },
      ];
      const receipt = store.putPipelined(main, records);
      void receipt.then((r) => settled.push(r.version));
      pending.push(receipt);
    }
    const receipts = await Promise.all(pending);
    const versions = receipts.map((r) => r.version);
    assert.deepEqual(
      versions,
      versions.map((_, i) => versions[0]! + i),
    );
    assert.deepEqual(settled, versions, "receipts settle in commit order");
    const again = await reopen();
    for (let i = 0; i < 3; i++) assert.equal(again.get(main, `k${i}`).value, 9 + i);
    for (let i = 0; i < 12; i++) assert.equal(again.get(main, `n${i}`).value, i);
  });

  test("later commits are built and handed over during a flush; no receipt before its flush", async () => {
    const store = await reopen();
    const gate = GatedWriter.install(store);
    gate.holding = true;
    let settled = 0;
    const pending = [0, 1, 2].map((i) => {
      const receipt = store.putPipelined(main, [{ key: "held", value: i }]);
      void receipt.then(() => settled++);
      return receipt;
    });
    await turns();
    // The first commit's write is held; the two after it were built on it and handed over.
    assert.equal(gate.held, 3);
    assert.equal(settled, 0);
    assert.equal(store.busy, true);
    // A synchronous read would see commits that are not durable: it is refused.
    assert.throws(() => store.get(main, "held"), isInternalError);
    gate.release();
    const receipts = await Promise.all(pending);
    await store.idle();
    assert.deepEqual(gate.outcomes, [true, true, true]);
    assert.deepEqual(
      receipts.map((r) => r.version - receipts[0]!.version),
      [0, 1, 2],
    );
    assert.equal(store.get(main, "held").value, 2);
  });

  test("a failed flush fails every commit built on it and reloads the state from LMDB", async () => {
    const store = await reopen();
    const before = await store.putPipelined(main, [{ key: "kept", value: "durable" }]);
    const gate = GatedWriter.install(store);
    gate.holding = true;
    const lost = [1, 2, 3].map((i) =>
      store.putPipelined(main, [
        { key: "kept", value: `lost ${i}` },
        { key: `lost${i}`, value: i },
      ]),
    );
    const deleted = store.deletePipelined(main, ["kept"]);
    await turns();
    // The first write fails; the three built on it reach LMDB, which must skip them.
    gate.fail();
    await Promise.all(
      [...lost, deleted].map((receipt) => assert.rejects(receipt, isInternalError)),
    );
    await store.idle();
    assert.deepEqual(gate.outcomes, [false, false, false]);
    assert.equal(store.get(main, "kept").value, "durable");
    for (let i = 1; i <= 3; i++) assert.equal(store.get(main, `lost${i}`).found, false);
    assert.equal(store.history("p", "main", undefined, 1).rows[0]!.version, before.version);
    // The store goes on from the durable state: the next version follows the last durable one.
    const next = await store.putPipelined(main, [{ key: "after", value: 1 }]);
    assert.equal(next.version, before.version + 1);
    const again = await reopen();
    assert.equal(again.get(main, "kept").value, "durable");
    assert.equal(again.get(main, "after").value, 1);
    assert.equal(again.get(main, "lost1").found, false);
    assert.equal(again.stats().next_version, next.version + 1);
  });

  test("a failure reported after the skips it caused: the chain restarts from the last durable commit", async () => {
    const store = await reopen();
    const before = await store.putPipelined(main, [{ key: "late", value: "durable" }]);
    const gate = GatedWriter.install(store);
    gate.holding = true;
    const lost = [1, 2, 3].map((i) =>
      assert.rejects(store.putPipelined(main, [{ key: "late", value: i }]), isInternalError),
    );
    await turns();
    await gate.failLate();
    await Promise.all(lost);
    await store.idle();
    // Restarted from the commit chained to by the skipped ones (a mark never written), every
    // later commit would be skipped too.
    const next = await store.putPipelined(main, [{ key: "late", value: "after" }]);
    assert.equal(next.version, before.version + 1);
    assert.equal(store.get(main, "late").value, "after");
    const again = await reopen();
    assert.equal(again.get(main, "late").value, "after");
  });

  test("nodes written while the codec reuses their memory hash to their addresses", async () => {
    // About 18 MiB of nodes in pipelined and synchronous commits, one round of them lost to a
    // failed flush: the codec's arenas fill, are released by the pipeline and reused many
    // times over. A node's memory reused before LMDB wrote it would leave bytes under an
    // address they do not hash to, or a record that reads back wrong.
    const store = await reopen();
    const gate = GatedWriter.install(store);
    const COMMITS = 16;
    const records = (commit: number, round: number) =>
      Array.from({ length: 500 }, (_, j) => {
        const i = commit * 500 + j;
        return {
          key: `reuse${String(i).padStart(5, "0")}`,
          value: { i, round, pad: "x".repeat(200 + (i % 97)) },
        };
      });
    for (let round = 0; round < 6; round++) {
      // Held until all sixteen are built (about 3 MiB of nodes, three arenas), so LMDB
      // writes them only after later commits were encoded.
      gate.holding = true;
      const outcomes = Array.from({ length: COMMITS }, (_, c) =>
        store.putPipelined(main, records(c, round)).then(
          () => true,
          () => false,
        ),
      );
      await turns();
      if (round === 3) gate.fail();
      else gate.release();
      assert.deepEqual(
        await Promise.all(outcomes),
        Array(COMMITS).fill(round !== 3),
        `round ${round}`,
      );
      await store.idle();
    }
    for (let c = 0; c < COMMITS; c += 2) store.put(main, records(c, 6));
    const check = (s: typeof store) => {
      let nodes = 0;
      for (const { key, value } of s.ctx.db.nodes.getRange()) {
        assert.equal(nodeAddress(value), key, "a node's bytes do not hash to its address");
        nodes++;
      }
      assert.ok(nodes > 1000, `${nodes} nodes`);
      for (let c = 0; c < COMMITS; c++) {
        for (const { key, value } of records(c, c % 2 === 0 ? 6 : 5)) {
          assert.deepEqual(s.get(main, key).value, value);
        }
      }
    };
    check(store);
    check(await reopen());
  });

  test("a sweep started while commits are in flight keeps their new nodes", async () => {
    const store = await reopen();
    const gate = GatedWriter.install(store);
    gate.holding = true;
    const records = Array.from({ length: 400 }, (_, i) => ({ key: `s${i}`, value: `new ${i}` }));
    const receipt = store.putPipelined(main, records);
    // The sweep reads the durable roots now, before the commit's nodes reach LMDB.
    const sweep = new NodeSweep(store.ctx);
    gate.release();
    await receipt;
    while (!sweep.step(Number.POSITIVE_INFINITY));
    const again = await reopen();
    for (let i = 0; i < 400; i += 37) assert.equal(again.get(main, `s${i}`).value, `new ${i}`);
  });
});
