import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import { GatedWriter } from "../engine/gated-writer.ts";
import { servedStore } from "./fixture.ts";

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Records the order in which promises settle. */
function settleOrder(promises: Record<string, Promise<unknown>>): string[] {
  const order: string[] = [];
  for (const [name, promise] of Object.entries(promises)) {
    promise.then(
      () => order.push(name),
      () => order.push(name),
    );
  }
  return order;
}

async function refusedInternal(promise: Promise<unknown>) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof SkeinError, String(error));
    assert.equal(error.code, "internal_error", error.message);
    return true;
  });
}

describe("commit pipeline over the socket", async () => {
  const served = await servedStore();
  const writer = await served.connect({ client: "writer" });
  const reader = await served.connect({ client: "reader" });
  await writer.call("collections.create", { collection: "c" });
  const base = await writer.put("c", [{ key: "k", value: "durable" }]);
  const gate = GatedWriter.install(served.store);

  test("receipts of several batches in flight come in commit order", async () => {
    const order: number[] = [];
    const puts = Array.from({ length: 8 }, (_, i) => {
      const records = Array.from({ length: 200 }, (_, j) => ({ key: `b${i}-${j}`, value: j }));
      const put = writer.put("c", records);
      void put.then((r) => order.push(r.version));
      return put;
    });
    const receipts = await Promise.all(puts);
    const versions = receipts.map((r) => r.version);
    assert.deepEqual(
      versions,
      versions.map((_, i) => versions[0]! + i),
    );
    assert.deepEqual(order, versions);
  });

  test("readers never see a version before it is durable", async () => {
    const before = (await reader.call("history.list", { collection: "c", limit: 1 })) as {
      rows: { version: number }[];
    };
    gate.holding = true;
    const put = writer.put("c", [{ key: "k", value: "new" }]);
    await wait(20);
    assert.equal(gate.held, 1, "the put's flush is held");
    // From another connection, and pipelined behind the put on its own.
    const get = reader.get("c", "k");
    const history = reader.call("history.list", { collection: "c", limit: 1 });
    const ownGet = writer.get("c", "k");
    const order = settleOrder({ put, get, history, ownGet });
    await wait(50);
    assert.equal(order.length, 0, "nothing is answered while the flush is held");
    gate.release();
    const receipt = await put;
    const seen = { found: true, value: "new", version: receipt.version };
    assert.deepEqual(await get, seen);
    assert.deepEqual(await ownGet, seen);
    const rows = ((await history) as { rows: { version: number }[] }).rows;
    assert.equal(rows[0]!.version, receipt.version);
    assert.ok(receipt.version > before.rows[0]!.version);
    // On one connection answers arrive as sent: the receipt before the read that shows it.
    assert.ok(order.indexOf("put") < order.indexOf("ownGet"), order.join(", "));
  });

  test("a failed flush fails later pipelined commits and readers see only durable state", async () => {
    const head = await reader.get("c", "k");
    gate.holding = true;
    const first = writer.put("c", [{ key: "k", value: "lost 1" }]);
    await wait(20);
    // Built on the held commit while it flushes, from both connections.
    const second = writer.put("c", [{ key: "k", value: "lost 2" }]);
    const third = reader.call("document.delete", { collection: "c", key: "k" });
    const get = reader.get("c", "k");
    await wait(20);
    // The first write fails; the two built on it reach LMDB, which must skip them.
    gate.fail();
    await Promise.all([refusedInternal(first), refusedInternal(second), refusedInternal(third)]);
    assert.deepEqual(gate.outcomes.slice(-2), [false, false]);
    assert.deepEqual(await get, head, "the read after the lost commits sees the durable head");
    // The store goes on: the next commit follows the last durable version.
    const next = await writer.put("c", [{ key: "k", value: "after" }]);
    assert.equal(next.version, head.version + 1);
    assert.equal((await reader.get("c", "k")).value, "after");
    assert.ok(base.version < head.version);
  });
});
