// The one-label histogram against prom-client's own: the same observations give the same
// exposition text, bucket edges, values past the largest bound and a reset included.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Histogram, Registry } from "prom-client";
import { OneLabelHistogram } from "../../../src/workflow/metrics/histogram.ts";
import { SECONDS_BUCKETS } from "../../../src/workflow/metrics/registry.ts";

function pair() {
  const ours = new Registry();
  const theirs = new Registry();
  const options = { name: "t_seconds", help: "A test histogram.", buckets: SECONDS_BUCKETS };
  const a = new OneLabelHistogram({ ...options, labelName: "outcome", registers: [ours] });
  const b = new Histogram({ ...options, labelNames: ["outcome"], registers: [theirs] });
  const observe = (outcome: string, value: number) => {
    a.observe(outcome, value);
    b.observe({ outcome }, value);
  };
  const same = async () => {
    assert.equal(await ours.metrics(), await theirs.metrics());
    // As JSON text: prom-client's sum and count carry an `exemplar` key set to undefined.
    const json = async (r: Registry) => JSON.parse(JSON.stringify(await r.getMetricsAsJSON()));
    assert.deepEqual(await json(ours), await json(theirs));
  };
  return { ours, theirs, observe, same };
}

describe("OneLabelHistogram", () => {
  test("nothing observed: the same text as prom-client's", async () => {
    await pair().same();
  });

  test("the same exposition as prom-client's for the same observations", async () => {
    const { observe, same } = pair();
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 5000; i++) {
      observe(next() < 0.9 ? "completed" : "failed", next() ** 4 * 400);
    }
    // Exactly on a bound counts in that bound's bucket; past the last only in +Inf.
    for (const v of [0, 0.0005, 0.001, 300, 300.0001, 1e9]) observe("completed", v);
    await same();
  });

  test("a reset forgets every series, as prom-client's does", async () => {
    const { ours, theirs, observe, same } = pair();
    observe("completed", 0.002);
    ours.resetMetrics();
    theirs.resetMetrics();
    await same();
    observe("failed", 0.3);
    await same();
  });
});
