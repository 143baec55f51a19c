/**
 * A store killed (SIGKILL, a real process) while its search indexes are being updated
 * reopens with correct answers: the keyword index (one SQLite transaction per update) and
 * the HNSW index (its last checkpoint, caught up from its version) answer as the exact
 * searches do, and no file of a killed checkpoint is left behind.
 */

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { StoreClient } from "../../../src/store/client/client.ts";
import { embedGroup, records, serve, settled, testModel, until } from "./fixture.ts";

const ENV = { SKEIN_SEARCH_INDEX_MIN: "50" };
const QUESTIONS = ["vector search model", "the store branch version", "people work world"];

async function assertCorrect(client: StoreClient): Promise<void> {
  for (const question of QUESTIONS) {
    const exact = await client.search("notes", "body", question, {
      mode: "vector",
      k: 10,
      exact: true,
    });
    const indexed = await client.search("notes", "body", question, { mode: "vector", k: 10 });
    assert.deepEqual(
      indexed.rows.map((r) => Math.round(r.score * 1e4)),
      exact.rows.map((r) => Math.round(r.score * 1e4)),
      question,
    );
    const keyword = await client.search("notes", "body", question, { mode: "keyword", k: 10 });
    // exact: every record read into a throwaway index, the keyword oracle.
    const scratch = await client.search("notes", "body", question, {
      mode: "keyword",
      k: 10,
      exact: true,
    });
    assert.deepEqual(keyword.rows, scratch.rows, question);
  }
}

test("SIGKILL during index updates, then correct answers after restart", async () => {
  const model = await testModel();
  const group = { ...embedGroup(model), embed_page_records: 256, embed_batch_items: 32 };
  let served = await serve(group, undefined, ENV);
  let client = await served.client();
  await client.call("collections.create", { collection: "notes" });
  await client.put("notes", records(0, 1500));
  await client.embedEnable("notes", "body");
  await settled(client, "notes");
  await client.search("notes", "body", "text", { mode: "hybrid" });
  await until(() => served.logs().some((l) => l.msg === "search index built"), "the index build");
  for (let round = 1; round <= 2; round++) {
    // A large change: the walk re-embeds it, the background catches the HNSW index up and
    // checkpoints it, and a keyword search catches its index up in one transaction.
    await client.put("notes", records(0, 1500, round));
    await settled(client, "notes");
    const pending = client.search("notes", "body", "world", { mode: "keyword" }).catch(() => {});
    // The kill lands at an arbitrary point of the search's work on purpose; every point must
    // recover, so how far it got does not matter.
    await new Promise((r) => setTimeout(r, round));
    served.running.child.kill("SIGKILL");
    await served.running.exited;
    await pending;
    const dataDir = served.dataDir;
    served = await serve(group, dataDir, ENV);
    client = await served.client();
    await settled(client, "notes");
    await assertCorrect(client);
    // Every file under search/vectors is named by a checkpoint.
    const dir = join(dataDir, "search", "vectors");
    const files = readdirSync(dir);
    const named = new Set<string>();
    for (const file of files.filter((f) => f.endsWith(".json") && !f.endsWith(".labels.json"))) {
      const checkpoint = JSON.parse(readFileSync(join(dir, file), "utf8"));
      named.add(file).add(checkpoint.index).add(checkpoint.labels);
    }
    assert.deepEqual(files.sort(), [...named].sort());
  }
  await served.stop();
});
