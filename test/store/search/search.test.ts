/**
 * search.text through the socket with the real embedding worker, on sets small enough to be
 * searched exactly: results at the head and at a past version equal the oracle (exact
 * cosine over the store's own vectors), a branch never sees another's records, keyword
 * (BM25) and hybrid (reciprocal rank fusion) rank a small labelled corpus, and every
 * refusal of the verb's table.
 */

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { searchCommand } from "../../../src/store/cli/search.ts";
import type { StoreClient } from "../../../src/store/client/client.ts";
import { RRF_K } from "../../../src/store/search/fuse.ts";
import { hybridDepth } from "../../../src/store/search/service.ts";
import { runCommand } from "../cli/harness.ts";
import { servedStore } from "../transport/fixture.ts";
import {
  assertSameHits,
  embedGroup,
  oracle,
  refusalOf,
  type Served,
  serve,
  settled,
  testModel,
  textOf,
} from "./fixture.ts";

const QUESTIONS = ["vector search model", "the store branch version", "people work world", "text"];

describe("search.text, exact at small sizes", () => {
  let served: Served;
  let client: StoreClient;
  const keys = Array.from({ length: 60 }, (_, i) => `r${String(i).padStart(3, "0")}`);
  before(async () => {
    const model = await testModel();
    served = await serve(embedGroup(model));
    client = await served.client();
    await client.call("collections.create", { collection: "notes" });
    await client.put(
      "notes",
      keys.map((key, i) => ({ key, value: i % 9 === 8 ? { other: 1 } : { body: textOf(i) } })),
    );
    await client.embedEnable("notes", "$.body");
    await settled(client, "notes");
  });
  after(() => served.stop());

  test("vector mode at the head equals the oracle (recall 1.0)", async () => {
    for (const question of QUESTIONS) {
      const answer = await client.search("notes", "$.body", question, { mode: "vector", k: 7 });
      assert.equal(answer.mode, "vector");
      assertSameHits(answer.rows, await oracle(client, "notes", keys, question, 7));
    }
  });

  test("concurrent questions share batches; beyond embed_waiting waiting: embed_busy", async () => {
    const expected = await oracle(client, "notes", keys, "people work world", 3);
    const answers = await Promise.allSettled(
      Array.from({ length: 40 }, () =>
        client.search("notes", "$.body", "people work world", { mode: "vector", k: 3 }),
      ),
    );
    let busy = 0;
    for (const answer of answers) {
      if (answer.status === "fulfilled") assertSameHits(answer.value.rows, expected);
      else {
        assert.equal((answer.reason as { code: string }).code, "embed_busy");
        busy++;
      }
    }
    assert.ok(busy > 0, "embed_waiting (4) bounds the questions waiting");
    assert.ok(busy < 40, "the first ones are answered");
  });

  test("at a past version: the oracle of that version, values of that version", async () => {
    const before = await client.search("notes", "$.body", "text", { mode: "vector", k: 60 });
    const past = before.version;
    await client.put("notes", [
      { key: "r000", value: { body: "vector search model" } },
      { key: "zz1", value: { body: "vector search model text" } },
    ]);
    await client.call("document.delete", { collection: "notes", keys: ["r001", "r002"] });
    await settled(client, "notes");
    const all = [...keys, "zz1"];
    for (const question of QUESTIONS) {
      const then = await client.search("notes", "$.body", question, {
        mode: "vector",
        k: 5,
        version: past,
      });
      assert.equal(then.version, past);
      assertSameHits(then.rows, await oracle(client, "notes", all, question, 5, { version: past }));
      const now = await client.search("notes", "$.body", question, { mode: "vector", k: 5 });
      assert.ok(now.version > past);
      assertSameHits(now.rows, await oracle(client, "notes", all, question, 5));
    }
    const then = await client.search("notes", "$.body", "vector search model", {
      mode: "vector",
      k: 60,
      version: past,
    });
    assert.ok(!then.rows.some((r) => r.key === "zz1"), "zz1 did not exist then");
    const r000 = then.rows.find((r) => r.key === "r000");
    assert.deepEqual(r000?.value, { body: textOf(0) });
    const now = await client.search("notes", "$.body", "vector search model", {
      mode: "vector",
      k: 60,
    });
    assert.ok(!now.rows.some((r) => r.key === "r001" || r.key === "r002"), "deleted records go");
    assert.equal(now.rows[0]!.window, 0);
  });

  test("prefix keeps to keys under it; values: false leaves values out", async () => {
    const answer = await client.search("notes", "$.body", "the store", {
      mode: "hybrid",
      k: 50,
      prefix: "r01",
      values: false,
    });
    assert.ok(answer.rows.length > 0);
    for (const row of answer.rows) {
      assert.ok(row.key.startsWith("r01"), row.key);
      assert.equal(row.value, undefined);
    }
    const underPrefix = keys.filter((k) => k.startsWith("r01"));
    assertSameHits(
      (await client.search("notes", "$.body", "the store", { mode: "vector", k: 5, prefix: "r01" }))
        .rows,
      await oracle(client, "notes", underPrefix, "the store", 5),
    );
  });

  test("a branch sees its own records only", async () => {
    await client.call("branches.create", { collection: "notes", branch: "side" });
    await client.put("notes", [{ key: "side1", value: { body: "question document words" } }], {
      branch: "side",
    });
    await client.put("notes", [{ key: "main1", value: { body: "question document words" } }]);
    await settled(client, "notes");
    for (const mode of ["vector", "keyword", "hybrid"] as const) {
      const side = await client.search("notes", "$.body", "question document words", {
        mode,
        k: 60,
        branch: "side",
      });
      const main = await client.search("notes", "$.body", "question document words", {
        mode,
        k: 60,
      });
      assert.ok(
        side.rows.some((r) => r.key === "side1"),
        `${mode}: side sees side1`,
      );
      assert.ok(!side.rows.some((r) => r.key === "main1"), `${mode}: side does not see main1`);
      assert.ok(
        main.rows.some((r) => r.key === "main1"),
        `${mode}: main sees main1`,
      );
      assert.ok(!main.rows.some((r) => r.key === "side1"), `${mode}: main does not see side1`);
    }
  });
});

describe("keyword and hybrid ranking on a labelled corpus", () => {
  let served: Served;
  let client: StoreClient;
  const corpus: Record<string, string> = {
    "doc-branch": "the store keeps each version of a branch",
    "doc-vector": "a vector search finds words near the question",
    "doc-people": "people work in the world every day",
    "doc-time": "a long time in the old world",
    "doc-model": "the model makes numbers of each text",
    "doc-year": "a good year for new work",
  };
  // Question → the record a reader labels the answer. Each labelled record is the only one
  // holding the question's words, so fusion must rank it first whatever the vector rank.
  const labels: [string, string][] = [
    ["vector search", "doc-vector"],
    ["branch version", "doc-branch"],
    ["people every day", "doc-people"],
    ["good new year", "doc-year"],
  ];
  before(async () => {
    const model = await testModel();
    served = await serve(embedGroup(model));
    client = await served.client();
    await client.call("collections.create", { collection: "docs" });
    await client.put(
      "docs",
      Object.entries(corpus).map(([key, body]) => ({ key, value: { body } })),
    );
    await client.embedEnable("docs", "body");
    await settled(client, "docs");
  });
  after(() => served.stop());

  test("keyword mode ranks the labelled record first, by BM25, only records with a word", async () => {
    for (const [question, label] of labels) {
      const answer = await client.search("docs", "body", question, { mode: "keyword", k: 6 });
      assert.equal(answer.rows[0]?.key, label, question);
      for (let i = 1; i < answer.rows.length; i++) {
        assert.ok(answer.rows[i - 1]!.score >= answer.rows[i]!.score);
      }
    }
    const none = await client.search("docs", "body", "quantum", { mode: "keyword", k: 6 });
    assert.deepEqual(none.rows, []);
    // FTS5 syntax in a question is read as words, never as a query.
    const odd = await client.search("docs", "body", 'vector" OR NEAR(* -', {
      mode: "keyword",
      k: 6,
    });
    assert.equal(odd.rows[0]?.key, "doc-vector");
  });

  test("keyword ranking follows edits: a put and a delete are seen at once", async () => {
    await client.put("docs", [{ key: "doc-new", value: { body: "vector vector search search" } }]);
    let answer = await client.search("docs", "body", "vector search", { mode: "keyword", k: 6 });
    assert.equal(answer.rows[0]?.key, "doc-new");
    await client.call("document.delete", { collection: "docs", key: "doc-new" });
    answer = await client.search("docs", "body", "vector search", { mode: "keyword", k: 6 });
    assert.equal(answer.rows[0]?.key, "doc-vector");
    assert.ok(!answer.rows.some((r) => r.key === "doc-new"));
  });

  test("hybrid (the default) is the reciprocal rank fusion of the vector and keyword ranks", async () => {
    for (const [question, label] of labels) {
      const k = 3;
      const depth = hybridDepth(k);
      const vector = await client.search("docs", "body", question, { mode: "vector", k: depth });
      const keyword = await client.search("docs", "body", question, { mode: "keyword", k: depth });
      const fused = new Map<string, number>();
      for (const ranking of [vector.rows, keyword.rows]) {
        ranking.forEach((row, i) => {
          fused.set(row.key, (fused.get(row.key) ?? 0) + 1 / (RRF_K + i + 1));
        });
      }
      const expected = [...fused].sort((a, b) => b[1] - a[1]).slice(0, k);
      const hybrid = await client.search("docs", "body", question, { k });
      assert.equal(hybrid.mode, "hybrid");
      assert.deepEqual(
        hybrid.rows.map((r) => [r.key, r.score]),
        expected,
      );
      assert.equal(hybrid.rows[0]?.key, label, question);
    }
  });

  test("skein-store search prints the verb's answer; a bad --mode is a usage error", async () => {
    const socket = ["--socket", served.socket];
    const printed = await runCommand(searchCommand, [
      ...socket,
      "docs",
      "body",
      "vector search",
      "--k",
      "2",
      "--mode",
      "keyword",
      "--no-values",
    ]);
    assert.equal(printed.status, 0, printed.err);
    const direct = await client.search("docs", "body", "vector search", {
      k: 2,
      mode: "keyword",
      values: false,
    });
    assert.deepEqual(JSON.parse(printed.out), direct);
    const bad = await runCommand(searchCommand, [
      ...socket,
      "docs",
      "body",
      "x",
      "--mode",
      "fuzzy",
    ]);
    assert.notEqual(bad.status, 0);
    assert.match(bad.err, /--mode must be vector, keyword or hybrid/);
  });

  test("refusals", async () => {
    const plain = (await client.call("collections.create", { collection: "plain" })) as {
      receipt: { version: number };
    };
    const plainVersion = plain.receipt.version;
    const cases: [string, Record<string, unknown>, string][] = [
      ["a field that is not the embedded one", { field: "title" }, "embed_field_not_found"],
      ["a collection with no embedded field", { collection: "plain" }, "embed_field_not_found"],
      ["a collection that does not exist", { collection: "nope" }, "collection_not_found"],
      ["a branch that does not exist", { branch: "nope" }, "branch_not_found"],
      ["k above max_page", { k: 101 }, "page_limit"],
      ["k zero", { k: 0 }, "invalid_request"],
      ["an unknown mode", { mode: "fuzzy" }, "invalid_request"],
      ["an empty text", { text: "" }, "invalid_request"],
      ["an unknown field", { limit: 3 }, "invalid_request"],
      ["a version after the head", { version: 1_000_000 }, "version_not_found"],
      [
        "a question above embed_input_bytes",
        { text: "word ".repeat(1000) },
        "embed_input_too_large",
      ],
      ["a version of another collection", { version: plainVersion }, "version_not_found"],
    ];
    for (const [what, change, code] of cases) {
      const args = { collection: "docs", field: "body", text: "vector", ...change };
      assert.equal(await refusalOf(client.call("search.text", args)), code, what);
    }
  });
});

describe("search.text without the embedding group", () => {
  test("is embed_disabled and not among hello's verbs", async () => {
    const plain = await servedStore();
    const client = await plain.connect({ verbs: true });
    {
      assert.ok(!(client.hello?.verbs ?? []).includes("search.text"));
      const code = await refusalOf(
        client.call("search.text", { collection: "c", field: "f", text: "t" }),
      );
      assert.equal(code, "embed_disabled");
    }
  });
});

describe("search.text over windowed vectors", () => {
  test("a record scores its best window; the answer names it; equal to the oracle", async () => {
    const model = await testModel();
    const served = await serve({
      ...embedGroup(model),
      embed_tokens: 8,
      embed_windows: true,
      embed_max_windows: 8,
      embed_window_overlap_tokens: 2,
    });
    try {
      const client = await served.client();
      await client.call("collections.create", { collection: "long" });
      const keys = Array.from({ length: 20 }, (_, i) => `w${String(i).padStart(2, "0")}`);
      await client.put(
        "long",
        keys.map((key, i) => ({
          key,
          value: { body: `${textOf(i)} ${textOf(i + 3)} ${textOf(i + 7)} ${textOf(i + 11)}` },
        })),
      );
      await client.embedEnable("long", "body");
      await settled(client, "long");
      const stored = await client.embedVectors("long", keys);
      assert.ok(
        Object.values(stored.vectors).some((w) => (w?.length ?? 0) > 1),
        "records have several windows",
      );
      for (const question of QUESTIONS) {
        const answer = await client.search("long", "body", question, { mode: "vector", k: 6 });
        const hits = await oracle(client, "long", keys, question, 6);
        assertSameHits(answer.rows, hits);
        assert.deepEqual(
          answer.rows.map((r) => r.window),
          hits.map((h) => h.window),
        );
      }
    } finally {
      await served.stop();
    }
  });
});
