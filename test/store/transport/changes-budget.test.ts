import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import { servedStore } from "./fixture.ts";

describe("changes.list on a large branch respects changes_node_budget", async () => {
  const budget = 32;
  const served = await servedStore({}, { changesNodeBudget: budget, changesMaxPage: 1000 });
  const client = await served.connect();
  await client.call("collections.create", { collection: "big" });
  for (let batch = 0; batch < 20; batch++) {
    const records = [];
    for (let i = 0; i < 1000; i++) {
      const n = batch * 1000 + i;
      records.push({
        key: `doc-${String(n).padStart(6, "0")}`,
        value: { n, pad: "p".repeat(150) },
      });
    }
    await client.put("big", records);
  }
  const base = (await client.get("big", "none")).version;

  test("a diff of 10 changes in 20,000 records loads few nodes and succeeds", async () => {
    const records = [];
    for (let i = 0; i < 10; i++)
      records.push({ key: `doc-${String(i * 1999).padStart(6, "0")}`, value: i });
    await client.put("big", records);
    const page = (await client.call("changes.list", {
      collection: "big",
      from: base,
      limit: 100,
    })) as {
      changes: { key: string; type: string }[];
      cursor: string | null;
      nodes_loaded: number;
    };
    assert.equal(page.changes.length, 10);
    assert.ok(page.changes.every((c) => c.type === "modified"));
    assert.equal(page.cursor, null);
    assert.ok(page.nodes_loaded <= budget * 4, `${page.nodes_loaded} nodes`);
  });

  test("a diff needing more than the budget in one shard is refused with changes_node_budget", async () => {
    // 400 changes spread over the whole branch touch about 100 leaves per shard.
    const records = [];
    for (let i = 0; i < 400; i++)
      records.push({ key: `doc-${String(i * 50).padStart(6, "0")}`, value: "spread" });
    await client.put("big", records);
    await assert.rejects(
      client.call("changes.list", { collection: "big", from: base, limit: 1000 }),
      (error: unknown) => error instanceof SkeinError && error.code === "changes_node_budget",
    );
  });
});
