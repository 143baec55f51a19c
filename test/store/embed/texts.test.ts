import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { StoreClient } from "../../../src/store/client/client.ts";
import { embedGroup, refusalOf, type Served, serve, testModel } from "./fixture.ts";
import type { TestModel } from "./test-model.ts";

interface Answer {
  model: string;
  dims: number;
  vectors: number[][][];
}

const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

describe("embed.texts through the socket with the shipped worker", () => {
  let model: TestModel;
  let served: Served;
  let client: StoreClient;
  before(async () => {
    model = await testModel();
    served = await serve({ ...embedGroup(model), embed_request_items: 4, embed_input_bytes: 64 });
    client = await served.client();
  });
  after(() => served.stop());

  test("answers one normalised vector per text, the same for the same text", async () => {
    const a = (await client.call("embed.texts", {
      texts: ["the store branch", "a vector search", "the store branch"],
    })) as Answer;
    assert.equal(a.model, model.identity);
    assert.equal(a.dims, 16);
    assert.equal(a.vectors.length, 3);
    for (const windows of a.vectors) {
      assert.equal(windows.length, 1);
      assert.equal(windows[0]!.length, 16);
      assert.ok(Math.abs(norm(windows[0]!) - 1) < 1e-5);
    }
    assert.deepEqual(a.vectors[0], a.vectors[2]);
    assert.notDeepEqual(a.vectors[0], a.vectors[1]);
  });

  test("questions go to the question worker and give the document vector (no prefix)", async () => {
    const d = (await client.call("embed.texts", { texts: ["model version"] })) as Answer;
    const q = (await client.call("embed.texts", {
      texts: ["model version"],
      kind: "question",
    })) as Answer;
    assert.deepEqual(q.vectors, d.vectors);
  });

  test("more than embed_request_items texts: embed_request_too_large", async () => {
    const code = await refusalOf(client.call("embed.texts", { texts: ["a", "b", "c", "d", "e"] }));
    assert.equal(code, "embed_request_too_large");
  });

  test("a text above embed_input_bytes: embed_input_too_large", async () => {
    const code = await refusalOf(client.call("embed.texts", { texts: ["ok", "x".repeat(65)] }));
    assert.equal(code, "embed_input_too_large");
  });

  test("a text beyond the model without windows is truncated to embed_tokens", async () => {
    // 30 content tokens fit embed_tokens 32 with [CLS] and [SEP]; what follows is cut.
    const head = Array.from({ length: 30 }, () => "a").join(" ");
    const a = (await client.call("embed.texts", {
      texts: [head, `${head} of`, `${head.slice(2)} of`],
    })) as Answer;
    assert.deepEqual(a.vectors[0], a.vectors[1]);
    assert.notDeepEqual(a.vectors[0], a.vectors[2]);
  });
});
