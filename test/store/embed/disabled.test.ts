import assert from "node:assert/strict";
import { test } from "node:test";
import { embedGroup, refusalOf, serve, testModel } from "./fixture.ts";

test("without the embedding group every embedding verb answers embed_disabled", async () => {
  const served = await serve({});
  try {
    const client = await served.client();
    await client.call("collections.create", { collection: "notes" });
    for (const [verb, args] of [
      ["embed.texts", { texts: ["a"] }],
      ["embed.enable", { collection: "notes", field: "text" }],
      ["embed.status", { collection: "notes" }],
      ["embed.vectors", { collection: "notes", keys: ["a"] }],
    ] as const) {
      assert.equal(await refusalOf(client.call(verb, args)), "embed_disabled", verb);
    }
  } finally {
    await served.stop();
  }
});

test("no embedded field, a version without vectors, a bad field path", async () => {
  const model = await testModel();
  const served = await serve(embedGroup(model));
  try {
    const client = await served.client();
    await client.call("collections.create", { collection: "notes" });
    const status = client.call("embed.status", { collection: "notes" });
    assert.equal(await refusalOf(status), "embed_field_not_found");
    const vectors = client.call("embed.vectors", { collection: "notes", keys: ["a"] });
    assert.equal(await refusalOf(vectors), "embed_version_not_embedded");
    const enable = client.call("embed.enable", { collection: "notes", field: "a..b" });
    assert.equal(await refusalOf(enable), "invalid_request");
    const missing = client.call("embed.enable", { collection: "absent", field: "text" });
    assert.equal(await refusalOf(missing), "collection_not_found");
    const hidden = client.call("document.list", { collection: "notes~embed" });
    assert.equal(await refusalOf(hidden), "invalid_request");
  } finally {
    await served.stop();
  }
});
