import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { freshStore } from "./fixture.ts";

const main = { collection: "g", branch: "main" };

describe("commit groups", async () => {
  const { store: first, reopen } = await freshStore();
  first.createCollection("g");

  test("writes in a group are deferred to one transaction and all land", async () => {
    const store = first;
    const before = store.ctx.db.branches.get(["g", "main"])!.head.version;
    store.beginGroup();
    const receipts: { version: number }[] = [];
    for (let i = 0; i < 5; i++) {
      receipts.push(store.put(main, [{ key: `k${i}`, value: i }]));
      // A later commit in the group builds on nodes the earlier ones have not written yet.
      receipts.push(store.put(main, [{ key: `k${i}`, value: i * 10 }]));
    }
    // Nothing is in LMDB yet: the stored head is still the one before the group.
    assert.equal(store.ctx.db.branches.get(["g", "main"])!.head.version, before);
    assert.equal(store.endGroup(), true);
    assert.deepEqual(
      receipts.map((r) => r.version),
      receipts.map((_, i) => receipts[0]!.version + i),
    );
    const again = await reopen();
    for (let i = 0; i < 5; i++) assert.equal(again.get(main, `k${i}`).value, i * 10);
  });

  test("any other operation in a group writes the deferred commits first", async () => {
    const store = await reopen();
    store.beginGroup();
    const receipt = store.put(main, [{ key: "seen", value: true }]);
    const history = store.history("g", "main", undefined, 1);
    assert.equal(history.rows[0]!.version, receipt.version);
    assert.equal(store.ctx.db.branches.get(["g", "main"])!.head.version, receipt.version);
    assert.equal(store.endGroup(), true);
  });
});
