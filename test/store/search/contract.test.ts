/**
 * search.text against the spec's embedding rules: a question must fit the model (refused
 * `embed_input_too_large`, never truncated, with or without windows); vectors of one model
 * are never searched with a question of another (`embed_model_change_not_available`); an
 * unknown collection is `collection_not_found`; and a retained version holding no records
 * answers an empty page.
 */

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { StoreClient } from "../../../src/store/client/client.ts";
import { embedGroup, refusalOf, type Served, serve, settled, testModel } from "./fixture.ts";

/** A question of `n` content tokens of the test model ("a" is one token). */
const tokens = (n: number) => Array.from({ length: n }, () => "a").join(" ");

interface Created {
  receipt: { version: number };
}

describe("search.text and the spec's rules, one model", () => {
  let served: Served;
  let client: StoreClient;
  /** The collection's first version (created, no records) and one the walk never embedded. */
  let emptyVersion: number;
  let unembeddedVersion: number;
  before(async () => {
    served = await serve(embedGroup(await testModel()));
    client = await served.client();
    emptyVersion = ((await client.call("collections.create", { collection: "notes" })) as Created)
      .receipt.version;
    const put = (key: string, body: string) =>
      client.call("document.put", {
        collection: "notes",
        key,
        value: { body },
      }) as Promise<{ version: number }>;
    unembeddedVersion = (await put("a", "the store branch")).version;
    // Enabled after a second commit: the walk embeds the head, never the version before it.
    await put("b", "a vector search");
    await client.embedEnable("notes", "body");
    await settled(client, "notes");
  });
  after(() => served.stop());

  test("a question longer than the model's window is embed_input_too_large, never truncated", async () => {
    // embed_tokens 32 holds 30 content tokens besides [CLS] and [SEP].
    const fits = await client.search("notes", "body", tokens(30), { mode: "vector" });
    assert.equal(fits.rows.length, 2);
    for (const mode of ["vector", "hybrid"] as const) {
      const code = await refusalOf(client.search("notes", "body", tokens(31), { mode }));
      assert.equal(code, "embed_input_too_large", mode);
    }
    // Keyword mode embeds no question, so the model's window does not bound it.
    await client.search("notes", "body", tokens(31), { mode: "keyword" });
    // The same rule for a question through embed.texts; a document is still truncated.
    const asked = client.embedTexts([tokens(31)], { kind: "question" });
    assert.equal(await refusalOf(asked), "embed_input_too_large");
    const documents = await client.embedTexts([tokens(30), tokens(31)]);
    assert.deepEqual(documents.vectors[0], documents.vectors[1]);
  });

  test("an unknown collection is collection_not_found, for search.text and embed.enable", async () => {
    const search = client.search("nope", "body", "store", { mode: "vector" });
    assert.equal(await refusalOf(search), "collection_not_found");
    const keyword = client.search("nope", "body", "store", { mode: "keyword" });
    assert.equal(await refusalOf(keyword), "collection_not_found");
    assert.equal(await refusalOf(client.embedEnable("nope", "body")), "collection_not_found");
  });

  test("a retained version holding no records answers an empty page; one with records the walk passed is refused", async () => {
    for (const mode of ["vector", "keyword", "hybrid"] as const) {
      const answer = await client.search("notes", "body", "store", { mode, version: emptyVersion });
      assert.deepEqual(answer.rows, [], mode);
      assert.equal(answer.version, emptyVersion);
    }
    const passed = client.search("notes", "body", "store", {
      mode: "vector",
      version: unembeddedVersion,
    });
    assert.equal(await refusalOf(passed), "embed_version_not_embedded");
  });

  test("after the model changes, vector and hybrid search are embed_model_change_not_available", async () => {
    await served.stop();
    served = await serve(embedGroup(await testModel({ seed: 2 })), served.dataDir);
    client = await served.client();
    for (const mode of ["vector", "hybrid"] as const) {
      const code = await refusalOf(client.search("notes", "body", "store", { mode }));
      assert.equal(code, "embed_model_change_not_available", mode);
    }
    // Keywords are the data's own words: no model is involved.
    const keyword = await client.search("notes", "body", "store", { mode: "keyword" });
    assert.deepEqual(
      keyword.rows.map((row) => row.key),
      ["a"],
    );
  });
});

describe("search.text with windows: the question must still fit the model", () => {
  let served: Served;
  let client: StoreClient;
  before(async () => {
    served = await serve({
      ...embedGroup(await testModel()),
      embed_tokens: 8,
      embed_windows: true,
      embed_max_windows: 8,
      embed_window_overlap_tokens: 2,
    });
    client = await served.client();
    await client.call("collections.create", { collection: "long" });
    await client.put("long", [{ key: "w", value: { body: tokens(20) } }]);
    await client.embedEnable("long", "body");
    await settled(client, "long");
  });
  after(() => served.stop());

  test("a question above one window's 6 content tokens is refused; a document gets windows", async () => {
    assert.equal(
      (await client.search("long", "body", tokens(6), { mode: "vector" })).rows.length,
      1,
    );
    const code = await refusalOf(client.search("long", "body", tokens(7), { mode: "vector" }));
    assert.equal(code, "embed_input_too_large");
    const documents = await client.embedTexts([tokens(7)]);
    assert.equal(documents.vectors[0]!.length, 2);
  });
});
