/**
 * A store SIGKILLed again and again while its embedding walk runs (a real process, a
 * seeded loop: kills during the first walk, then during passes that change, strip and
 * delete records) reopens with every record findable by a vector search for its own text:
 * every record with text has vectors at the head, exact search finds each among the top
 * 50, and the HNSW index (caught up across the kills from its checkpoints) misses no more
 * than its approximation does. The kill points come from a seed (SKEIN_TEST_SEED, else a
 * random one), printed with any failure so it reproduces.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import type { StoreClient } from "../../../src/store/client/client.ts";
import { mulberry32 } from "../embed/test-model.ts";
import { embedGroup, type Served, serve, settled, testModel, until } from "./fixture.ts";

const RECORDS = 2000;
/** Kills during the first walk, then during each of the update passes. */
const FIRST_WALK_KILLS = 3;
const UPDATE_PASSES = 3;
const ENV = { SKEIN_SEARCH_INDEX_MIN: "64" };

/** Four disjoint groups of ten words: a record's text is one word of each, by its digits. */
const GROUPS = [
  "the a an of and to in is it that",
  "on for with as was by at be this are",
  "from or have not but what all were when we",
  "there can more one about which their will up out",
].map((g) => g.split(" "));

/** A text unique to `n` (0..9999): no two share the same four words. */
function textOf(n: number): string {
  const digits = String(n).padStart(4, "0");
  return [...digits].map((d, p) => GROUPS[p]![Number(d)]!).join(" ");
}

test("SIGKILL during the embedding walk, then every record found by its own text", async (t) => {
  const seed = Number(process.env.SKEIN_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const rand = mulberry32(seed);
  const say = (what: string) => `${what} (seed ${seed}; rerun with SKEIN_TEST_SEED=${seed})`;
  t.diagnostic(`seed ${seed}`);
  const group = { ...embedGroup(await testModel()), embed_page_records: 16, embed_batch_items: 16 };
  let served: Served = await serve(group, undefined, ENV);
  let client: StoreClient = await served.client();
  /** The text of each record that has one. */
  const texts = new Map<string, string>();
  const keyOf = (i: number) => `r${String(i).padStart(4, "0")}`;

  /** Kills the store once `ready` holds (polled over the socket), then serves it again. */
  const killWhen = async (ready: (status: Status) => boolean) => {
    for (;;) {
      const status = (await client.embedStatus("notes")) as Status;
      if (status.pending === 0 || ready(status)) break;
    }
    served.running.child.kill("SIGKILL");
    await served.running.exited;
    served = await serve(group, served.dataDir, ENV);
    client = await served.client();
  };

  await client.call("collections.create", { collection: "notes" });
  const first = Array.from({ length: RECORDS }, (_, i) => ({
    key: keyOf(i),
    value: { body: textOf(i) },
  }));
  for (const r of first) texts.set(r.key, r.value.body);
  await client.put("notes", first);
  await client.embedEnable("notes", "body");
  for (let k = 0; k < FIRST_WALK_KILLS; k++) {
    const at = Math.floor(rand() * RECORDS);
    await killWhen((s) => s.records_embedded >= at);
  }
  await settled(client, "notes");
  // The first search starts the HNSW build; the update passes then catch the index up.
  await client.search("notes", "body", "the", { mode: "vector" });
  await until(() => served.logs().some((l) => l.msg === "search index built"), "the index build");

  for (let pass = 1; pass <= UPDATE_PASSES; pass++) {
    // Each pass changes some texts, drops the field of some records and deletes some.
    const puts: { key: string; value: unknown }[] = [];
    const deletes: string[] = [];
    for (let i = 0; i < RECORDS; i++) {
      const key = keyOf(i);
      const roll = rand();
      if (roll < 0.2) {
        const text = textOf(RECORDS * pass + i);
        puts.push({ key, value: { body: text } });
        texts.set(key, text);
      } else if (roll < 0.25) {
        puts.push({ key, value: { other: pass } });
        texts.delete(key);
      } else if (roll < 0.3 && texts.has(key)) {
        deletes.push(key);
        texts.delete(key);
      }
    }
    await client.put("notes", puts);
    if (deletes.length > 0)
      await client.call("document.delete", { collection: "notes", keys: deletes });
    const polls = Math.floor(rand() * 20);
    let seen = 0;
    await killWhen((s) => s.branches.some((b) => b.walking !== null) && seen++ >= polls);
    await settled(client, "notes");
    // A search at the head catches the index up (or leaves it to the background).
    await client.search("notes", "body", "the", { mode: "vector" });
  }
  await settled(client, "notes");

  const keys = [...texts.keys()];
  const missing: string[] = [];
  for (let at = 0; at < keys.length; at += 500) {
    const { vectors } = await client.embedVectors("notes", keys.slice(at, at + 500));
    for (const [key, windows] of Object.entries(vectors)) if (windows === null) missing.push(key);
  }
  const lost: string[] = [];
  for (const [key, text] of texts) {
    const answer = await client.search("notes", "body", text, {
      mode: "vector",
      k: 50,
      values: false,
    });
    if (!answer.rows.some((r) => r.key === key)) lost.push(key);
  }
  const exactLost: string[] = [];
  for (const key of lost) {
    const answer = await client.search("notes", "body", texts.get(key)!, {
      mode: "vector",
      k: 50,
      values: false,
      exact: true,
    });
    if (!answer.rows.some((r) => r.key === key)) exactLost.push(key);
  }
  await served.stop();
  // Vectors missing: a page's end marker committed apart from its vectors (fixed: one
  // commit a page). Every record with text must have them.
  assert.deepEqual(missing, [], say("records with text but no vectors"));
  // Exact search reads every stored vector: it must find each record by its own text.
  assert.deepEqual(exactLost, [], say("records exact search did not find"));
  // HNSW is approximate: on the test model's clustered vectors a fresh build misses 0 to 3
  // of 2,000 exact-match questions. An index edited in place without dead points kept
  // (hnsw.ts) lost more with every pass; this bound catches that, not the approximation.
  assert.ok(lost.length <= 10, say(`the index did not find ${lost.length}: ${lost.join(" ")}`));
});

interface Status {
  pending: number;
  records_embedded: number;
  branches: { walking: number | null }[];
}
