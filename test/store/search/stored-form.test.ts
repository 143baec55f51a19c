/**
 * A store written by an earlier version keeps its vectors as `{windows, data}` JSON records
 * (base64 float32) in the companion; this version writes raw bytes. Here a served store's
 * companion is rewritten in the earlier form through the engine (the walk's marker kept, so
 * nothing is embedded again), then served again: exact search, the index built from it, a
 * past version and embed.vectors answer exactly as before the rewrite, and records the walk
 * embeds afterwards (raw, beside the old ones) are found too, index and exact agreeing.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import type { StoreClient } from "../../../src/store/client/client.ts";
import { ENGINE_DEFAULTS, openStore, type Store } from "../../../src/store/engine/index.ts";
import { embedGroup, serve, testModel } from "../embed/fixture.ts";
import { assertSameHits, oracle, records, searchStats, settled, until } from "./fixture.ts";

const ENV = { SKEIN_SEARCH_INDEX_MIN: "50" };
const COUNT = 240;
const KEYS = records(0, COUNT).map((r) => r.key);
const QUESTIONS = ["vector search model", "the store branch version", "people work world"];
const COMPANION = { collection: "notes~embed", branch: "main" };

type Rows = { key: string; score: number; window?: number }[];

async function answers(client: StoreClient, options: { exact?: boolean; version?: number }) {
  const out: Rows[] = [];
  for (const question of QUESTIONS) {
    const page = await client.search("notes", "body", question, {
      mode: "vector",
      k: 10,
      values: false,
      ...options,
    });
    out.push(page.rows);
  }
  return out;
}

/**
 * The index's rows agree with exact search's: the same scores rank by rank (float32 in the
 * index), and the same keys above the last score (the test texts repeat, so equal vectors
 * tie at the cut and either may be answered).
 */
function assertAgree(indexed: Rows, exact: Rows, label: string): void {
  assert.equal(indexed.length, exact.length, label);
  indexed.forEach((row, i) => {
    assert.ok(Math.abs(row.score - exact[i]!.score) < 1e-4, `${label}: rank ${i}`);
  });
  const last = exact.at(-1)!.score;
  const above = (rows: Rows) =>
    rows
      .filter((r) => r.score > last + 1e-4)
      .map((r) => r.key)
      .sort();
  assert.deepEqual(above(indexed), above(exact), label);
}

function openData(dataDir: string): Store {
  return openStore({
    dataDir,
    branchCacheBytesPerShard: 1 << 20,
    maxPage: 1000,
    ...ENGINE_DEFAULTS,
  });
}

/** The companion head's records, by kind of stored value. */
function forms(store: Store): { raw: string[]; json: string[] } {
  const raw: string[] = [];
  const json: string[] = [];
  let after: string | undefined;
  do {
    const page = store.list(COMPANION, { after, limit: 1000 });
    for (const row of page.rows) (row.value instanceof Uint8Array ? raw : json).push(row.key);
    after = page.next ?? undefined;
  } while (after !== undefined);
  return { raw, json };
}

test("a companion of base64 JSON records (an earlier version's) is searched as it is", async () => {
  const model = await testModel();
  const first = await serve({ ...embedGroup(model), embed_page_records: 64 }, undefined, ENV);
  let exactBefore: Rows[];
  let vectorsBefore: Record<string, number[][] | null>;
  let version: number;
  try {
    const client = await first.client();
    await client.call("collections.create", { collection: "notes" });
    await client.put("notes", records(0, COUNT));
    await client.embedEnable("notes", "body");
    await settled(client, "notes");
    exactBefore = await answers(client, { exact: true });
    ({ vectors: vectorsBefore, version } = await client.embedVectors("notes", KEYS));
  } finally {
    await first.stop();
  }

  // The earlier form, written through the engine: the same float32 bytes in base64 JSON,
  // committed with the head's own marker (complete at the same data version).
  const store = openData(first.dataDir);
  try {
    assert.deepEqual(forms(store).json, [], "this version's walk writes raw bytes");
    const head = store.history(COMPANION.collection, COMPANION.branch, undefined, 1).rows[0]!;
    const puts = store.list(COMPANION, { limit: 1000 }).rows.map(({ key, value }) => {
      const bytes = value as Uint8Array;
      const windows = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true);
      const data = Buffer.from(bytes.subarray(4)).toString("base64");
      return { key, value: { windows, data } };
    });
    assert.equal(puts.length, COUNT);
    store.edit(COMPANION, { puts, deletes: [] }, head.author);
    assert.deepEqual(forms(store).raw, []);
  } finally {
    await store.close();
  }

  const again = await serve({ ...embedGroup(model), embed_page_records: 64 }, first.dataDir, ENV);
  try {
    const client = await again.client();
    // Exact search and embed.vectors read the old form to the same bits.
    assert.deepEqual(await answers(client, { exact: true }), exactBefore);
    const read = await client.embedVectors("notes", KEYS);
    assert.equal(read.version, version);
    assert.deepEqual(read.vectors, vectorsBefore);
    // The index is built from the old records (read into the head's table) and agrees.
    await client.search("notes", "body", "text", { mode: "vector" });
    await until(async () => (await searchStats(client)).vector_records === COUNT, "the index");
    const indexed = await answers(client, {});
    indexed.forEach((rows, i) => {
      assertAgree(rows, exactBefore[i]!, QUESTIONS[i]!);
    });
    // The walk embeds changed records in the raw form beside the old ones; the index
    // catches up from that diff (old values out, raw in), and both paths agree with the
    // oracle computed from embed.vectors.
    await client.put("notes", records(0, 40, 3));
    await settled(client, "notes");
    for (const question of QUESTIONS) {
      const hits = await oracle(client, "notes", KEYS, question, 10);
      const exact = await client.search("notes", "body", question, {
        mode: "vector",
        k: 10,
        exact: true,
      });
      assertSameHits(exact.rows, hits);
      const viaIndex = await client.search("notes", "body", question, { mode: "vector", k: 10 });
      assertAgree(viaIndex.rows, exact.rows, question);
    }
    // A past version (the old form only) is still searched exactly as before.
    assert.deepEqual(await answers(client, { exact: true, version }), exactBefore);
  } finally {
    await again.stop();
  }

  const after = openData(first.dataDir);
  try {
    const { raw, json } = forms(after);
    assert.equal(raw.length, 40);
    assert.equal(json.length, COUNT - 40);
  } finally {
    await after.close();
  }
});
