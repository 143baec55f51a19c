/**
 * The HNSW index of a branch head (SKEIN_SEARCH_INDEX_MIN lowered so small sets get one):
 * built once in the background, then caught up from diffs after puts and deletes (never
 * rebuilt), not rebuilt either when retention (keep one version) releases while it lags
 * (it holds its version), its answers equal to exact search; dropped with its branch,
 * sizes in store.stats.
 */

import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { StoreClient } from "../../../src/store/client/client.ts";
import {
  embedGroup,
  records,
  type Served,
  searchStats,
  serve,
  settled,
  testModel,
  until,
} from "./fixture.ts";

const ENV = { SKEIN_SEARCH_INDEX_MIN: "50" };
const QUESTIONS = [
  "vector search model",
  "the store branch version",
  "people work world",
  "good year",
];

const built = (served: Served) =>
  served.logs().filter((l) => l.msg === "search index built").length;

/** The index's answers (mode vector) equal exact search's, question by question. */
async function assertIndexExact(client: StoreClient, branch = "main"): Promise<void> {
  for (const question of QUESTIONS) {
    const indexed = await client.search("notes", "body", question, {
      mode: "vector",
      k: 10,
      branch,
    });
    const exact = await client.search("notes", "body", question, {
      mode: "vector",
      k: 10,
      branch,
      exact: true,
    });
    assert.equal(indexed.version, exact.version);
    // Many test texts repeat (equal vectors tie), so ranks are compared by score: the same
    // scores (float32 in the index, float64 in exact), and every key ranked above the
    // last score is the same.
    assert.equal(indexed.rows.length, exact.rows.length, question);
    indexed.rows.forEach((row, i) => {
      assert.ok(Math.abs(row.score - exact.rows[i]!.score) < 1e-4, `${question}: rank ${i}`);
    });
    const last = exact.rows.at(-1)!.score;
    const above = (rows: { key: string; score: number }[]) =>
      rows
        .filter((r) => r.score > last + 1e-4)
        .map((r) => r.key)
        .sort();
    assert.deepEqual(above(indexed.rows), above(exact.rows), question);
  }
}

test("the head index: built once, caught up from diffs after puts and deletes, exact answers", async () => {
  const model = await testModel();
  const served = await serve({ ...embedGroup(model), embed_page_records: 64 }, undefined, ENV);
  try {
    const client = await served.client();
    await client.call("collections.create", { collection: "notes" });
    await client.put("notes", records(0, 300));
    await client.embedEnable("notes", "body");
    await settled(client, "notes");
    await client.search("notes", "body", "text", { mode: "vector" }); // starts the build
    await until(() => built(served) === 1, "the index build");
    assert.equal((await searchStats(client)).vector_records, 300);
    await assertIndexExact(client);

    // Puts (changed and new records) and deletes: the index follows the diff.
    await client.put("notes", [...records(0, 20, 5), ...records(300, 20)]);
    await client.call("document.delete", {
      collection: "notes",
      keys: records(100, 10).map((r) => r.key),
    });
    await settled(client, "notes");
    await assertIndexExact(client);
    await client.search("notes", "body", "world", { mode: "keyword" });
    const stats = await searchStats(client);
    assert.equal(stats.vector_records, 310);
    assert.equal(stats.vector_indexes, 1);
    assert.equal(stats.keyword_indexes, 1);
    assert.ok(stats.keyword_bytes > 0);
    await until(async () => (await searchStats(client)).vector_bytes > 0, "a checkpoint");
    assert.equal(built(served), 1, "never rebuilt");
  } finally {
    await served.stop();
  }
});

test("keep-1 retention with commits and searches: one build of each index, exact answers", async () => {
  const model = await testModel();
  const served = await serve(
    {
      ...embedGroup(model),
      embed_page_records: 64,
      // Every older head leaves the branch record at once: retention can release it.
      kept_versions: 1,
      retention: { keep: { versions: 1, days: 0 } },
    },
    undefined,
    ENV,
  );
  try {
    const client = await served.client();
    await client.call("collections.create", { collection: "notes" });
    await client.put("notes", records(0, 200));
    await client.embedEnable("notes", "body");
    await settled(client, "notes");
    await client.search("notes", "body", "text", { mode: "vector" });
    await until(() => built(served) === 1, "the index build");
    let released = 0;
    for (let round = 0; round < 5; round++) {
      // Two commits per round: the index lags by more than one version when the release runs.
      await client.put("notes", records(round * 10, 10, round + 1));
      await client.put("notes", records(100 + round * 10, 5, round + 7));
      const release = (await client.call("history.release", {})) as { released: number };
      released += release.released;
      await settled(client, "notes");
      released += ((await client.call("history.release", {})) as { released: number }).released;
      await assertIndexExact(client);
      const keyword = await client.search("notes", "body", "world", { mode: "keyword", k: 20 });
      const scratch = await client.search("notes", "body", "world", {
        mode: "keyword",
        k: 20,
        exact: true,
      });
      assert.deepEqual(keyword.rows, scratch.rows);
    }
    assert.ok(released > 0, "retention released versions meanwhile");
    const stats = await searchStats(client);
    assert.equal(stats.vector_builds, 1, "the vector index was never rebuilt");
    assert.equal(stats.keyword_builds, 1, "the keyword index was never rebuilt");
    assert.equal(built(served), 1);
  } finally {
    await served.stop();
  }
});

test("deleting a branch drops its indexes and their files", async () => {
  const model = await testModel();
  const served = await serve({ ...embedGroup(model), embed_page_records: 64 }, undefined, ENV);
  try {
    const client = await served.client();
    await client.call("collections.create", { collection: "notes" });
    await client.put("notes", records(0, 120));
    await client.embedEnable("notes", "body");
    await client.call("branches.create", { collection: "notes", branch: "side" });
    await client.put("notes", records(120, 5), { branch: "side" });
    await settled(client, "notes");
    for (const branch of ["main", "side"]) {
      await client.search("notes", "body", "text", { branch });
    }
    await until(() => built(served) === 2, "both builds");
    await assertIndexExact(client, "side");
    let stats = await searchStats(client);
    assert.equal(stats.vector_indexes, 2);
    assert.equal(stats.keyword_indexes, 2);
    assert.equal(stats.vector_records, 245);
    const dir = join(served.dataDir, "search", "vectors");
    assert.equal(readdirSync(dir).length, 6, "two checkpoints of three files");
    await client.call("branches.delete", { collection: "notes", branch: "side" });
    stats = await searchStats(client);
    assert.equal(stats.vector_indexes, 1);
    assert.equal(stats.keyword_indexes, 1);
    assert.equal(stats.vector_records, 120);
    assert.equal(readdirSync(dir).length, 3);
    await client.call("collections.delete", { collection: "notes" });
    stats = await searchStats(client);
    assert.deepEqual([stats.vector_indexes, stats.keyword_indexes], [0, 0]);
    assert.equal(readdirSync(dir).length, 0);
  } finally {
    await served.stop();
  }
});
