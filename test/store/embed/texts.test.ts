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

describe("embed.texts with a BERT-shaped model (encoder layers) in the shipped worker", () => {
  let plain: TestModel;
  let served: Served;
  let client: StoreClient;
  before(async () => {
    plain = await testModel({ dims: 32 });
    const model = await testModel({ dims: 32, layers: 2 });
    served = await serve(embedGroup(model));
    client = await served.client();
  });
  after(() => served.stop());

  test("a text gives the same vector alone and padded in a batch: attention skips padding", async () => {
    const short = "the store";
    const long = "the store branch version model vector search document question words";
    const alone = (await client.call("embed.texts", { texts: [short] })) as Answer;
    const batched = (await client.call("embed.texts", { texts: [long, short] })) as Answer;
    assert.equal(alone.dims, 32);
    assert.ok(Math.abs(norm(alone.vectors[0]![0]!) - 1) < 1e-5);
    const a = alone.vectors[0]![0]!;
    const b = batched.vectors[1]![0]!;
    assert.ok(
      a.every((x, i) => Math.abs(x - b[i]!) < 1e-5),
      "the padded copy differs",
    );
  });

  test("the layers change the vectors: not the embedding lookup's alone", async () => {
    const layered = (await client.call("embed.texts", { texts: ["model version"] })) as Answer;
    const other = await serve(embedGroup(plain));
    try {
      const lookup = (await (
        await other.client()
      ).call("embed.texts", {
        texts: ["model version"],
      })) as Answer;
      assert.notEqual(layered.model, lookup.model);
      const dot = layered.vectors[0]![0]!.reduce(
        (s, x, i) => s + x * lookup.vectors[0]![0]![i]!,
        0,
      );
      assert.ok(dot < 0.99, `cosine ${dot}`);
    } finally {
      await other.stop();
    }
  });
});
