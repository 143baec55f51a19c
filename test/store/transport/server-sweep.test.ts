import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { servedStore } from "./fixture.ts";

const main = { collection: "c", branch: "main" };

describe("freeing nodes over the socket", () => {
  test("requests are answered while a large sweep is in progress", async () => {
    const served = await servedStore(
      {},
      {
        keptVersions: 1,
        retention: {
          releaseMaxRows: 1024,
          releaseBatch: 1_000_000,
          keep: { versions: 1, days: 0 },
        },
      },
    );
    const { store } = served;
    store.createCollection("c");
    for (let round = 0; round < 12; round++) {
      const records = Array.from({ length: 400 }, (_, i) => ({
        key: `k${i}`,
        value: { round, pad: "p".repeat(120) },
      }));
      store.put(main, records);
    }
    // One node per step, and none while the test holds it: the sweep is still in progress
    // when each request below arrives, however fast or slow the machine (a sweep that did
    // not yield between steps would never end, and the test would time out).
    let held = true;
    let heldSteps = 0;
    Object.defineProperty(store, "sweepStepWork", {
      get: () => {
        if (!held) return 1;
        heldSteps++;
        return 0;
      },
    });
    const before = store.stats();
    const client = await served.connect();
    let released = false;
    const release = client.call("history.release", {}).then((result) => {
      released = true;
      return result as { released: number; sweep: { nodes_freed: number } };
    });
    const answeredDuring: boolean[] = [];
    for (let i = 0; i < 5; i++) {
      const got = (await client.get("c", `k${i}`)) as { found: boolean; value: { round: number } };
      assert.equal(got.value.round, 11);
      answeredDuring.push(!released);
      await client.put("c", [{ key: `new${i}`, value: i }]);
    }
    // Every request sent after history.release was answered before it, between its steps.
    assert.deepEqual(answeredDuring, [true, true, true, true, true]);
    assert.ok(heldSteps > 0, "the sweep was stepping while the requests were answered");
    held = false;
    const result = await release;
    assert.ok(result.released > 0);
    assert.ok(result.sweep.nodes_freed > 0);
    const after = store.stats();
    assert.ok(after.node_entries < before.node_entries);
    // The commits made during the sweep are intact.
    for (let i = 0; i < 5; i++) {
      assert.deepEqual(await client.get("c", `new${i}`), {
        found: true,
        value: i,
        version: after.next_version - 1,
      });
    }
  });
});
