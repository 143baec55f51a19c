import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { NodeSweep } from "../../../src/store/engine/gc.ts";
import type { Store } from "../../../src/store/engine/index.ts";
import { release } from "../../../src/store/engine/retention.ts";
import { walk } from "../../../src/store/tree/cursor.ts";
import { freshStore } from "./fixture.ts";

const main = { collection: "c", branch: "main" };
const later = () => Date.now() + 60_000;
const retention = { releaseMaxRows: 1024, releaseBatch: 1_000_000, keep: { versions: 3, days: 0 } };

const records = (round: number) =>
  Array.from({ length: 300 }, (_, i) => ({ key: `k${i}`, value: { round, pad: "r".repeat(90) } }));

/** 12 commits rewriting every record, so each released version holds nodes of its own. */
function churn(store: Store): void {
  store.createCollection("c");
  for (let round = 0; round < 12; round++) store.put(main, records(round));
}

/** Every node of every retained tree can be read from LMDB (after a reopen: no caches). */
function assertComplete(store: Store): void {
  const { db } = store.ctx;
  const roots: (string | null)[] = [];
  for (const { value } of db.branches.getRange()) {
    for (const version of [value.head, ...value.kept]) roots.push(...version.roots);
  }
  for (const { value } of db.history.getRange()) roots.push(...value.roots);
  for (const [i, root] of roots.entries()) {
    walk(store.ctx.readers[0]!, root, () => {});
    assert.ok(root === null || db.get(root) !== undefined, `root ${i}`);
  }
}

describe("node sweeps", () => {
  test("a sweep in steps of one frees exactly what a sweep at once frees", async () => {
    const once = await freshStore({ keptVersions: 2, retention });
    const stepped = await freshStore({ keptVersions: 2, retention });
    churn(once.store);
    churn(stepped.store);
    const at = later();
    const a = once.store.release(at);
    stepped.store.stepSweeps = true;
    stepped.store.sweepStepWork = 1;
    const b = await stepped.store.releaseInSteps(at);
    assert.equal(a.released, 10);
    assert.equal(b.released, 10);
    assert.ok(a.sweep!.nodes_freed > 0);
    assert.equal(b.sweep!.nodes_freed, a.sweep!.nodes_freed);
    assert.equal(stepped.store.stats().node_entries, once.store.stats().node_entries);
    assertComplete(await stepped.reopen());
  });

  test("a commit between steps keeps its nodes, even ones that were garbage", async () => {
    const { store, reopen } = await freshStore({ keptVersions: 2, retention });
    churn(store);
    // The creation version and rounds 0..8 are released: round 0's nodes are garbage now.
    assert.equal(release(store.ctx, later(), () => null).released, 10);
    const sweep = new NodeSweep(store.ctx);
    while (sweep.phase === "mark") sweep.step(1);
    // Round 0's records again: the same tree, so the commit rewrites exactly the garbage
    // nodes of round 0 while the sweep has examined at most one key.
    store.put(main, records(0));
    while (!sweep.step(1));
    assert.ok(sweep.result.nodes_freed > 0);
    const reopened = await reopen();
    assertComplete(reopened);
    for (let i = 0; i < 300; i++) {
      const got = reopened.get(main, `k${i}`);
      assert.deepEqual(got.value, { round: 0, pad: "r".repeat(90) }, `k${i}`);
    }
  });

  test("sweeps asked for while one runs share the next one; the driver sweeps in steps", async () => {
    const { store, reopen } = await freshStore({
      keptVersions: 1,
      retention: { ...retention, releaseBatch: 4 },
    });
    store.stepSweeps = true;
    store.sweepStepWork = 2;
    store.createCollection("c");
    // The 4th advance releases and starts a stepped sweep; nothing is freed at once.
    for (let round = 0; round < 4; round++) store.put(main, records(round));
    const peak = store.stats().node_entries;
    const [first, second] = await Promise.all([store.sweepInSteps(), store.sweepInSteps()]);
    assert.deepEqual(first, second);
    assert.ok(store.stats().node_entries < peak, "the driver's sweep freed the released nodes");
    assertComplete(await reopen());
  });

  test("closing the store ends a stepped sweep with internal_error", async () => {
    const { store } = await freshStore({ keptVersions: 2, retention });
    churn(store);
    store.stepSweeps = true;
    store.sweepStepWork = 1;
    const pending = store.releaseInSteps(later());
    await store.close();
    await assert.rejects(pending, { code: "internal_error" });
  });
});
