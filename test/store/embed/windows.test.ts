/**
 * Windows through the socket with the real worker: a long document is embedded in
 * overlapping windows of embed_tokens (less [CLS] and [SEP]) sharing
 * embed_window_overlap_tokens tokens; more than embed_max_windows is windows_over_cap;
 * questions never use windows and are never truncated (a longer one is refused).
 */

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { StoreClient } from "../../../src/store/client/client.ts";
import { embedGroup, refusalOf, type Served, serve, testModel } from "./fixture.ts";

// Words that are one token each in the test model's vocabulary.
const WORDS =
  "the of and to in is it that on for with as was by at be this are from or have not but what all were when we there can more one about".split(
    " ",
  );
const tokens = (n: number, from = 0) => WORDS.slice(from, from + n).join(" ");

interface Answer {
  vectors: number[][][];
}

describe("windows", () => {
  let served: Served;
  let client: StoreClient;
  before(async () => {
    const model = await testModel();
    served = await serve({
      ...embedGroup(model),
      embed_tokens: 12, // 10 content tokens a window
      embed_windows: true,
      embed_window_overlap_tokens: 4, // so each window starts 6 tokens after the last
      embed_max_windows: 3,
    });
    client = await served.client();
  });
  after(() => served.stop());

  test("a text that fits is one window; longer ones overlap by embed_window_overlap_tokens", async () => {
    const a = (await client.call("embed.texts", {
      texts: [tokens(10), tokens(16), tokens(22)],
    })) as Answer;
    assert.deepEqual(
      a.vectors.map((w) => w.length),
      [1, 2, 3],
    );
    // Each window is the question of exactly its tokens: 0..10, 6..16, 12..22.
    const q = (await client.call("embed.texts", {
      kind: "question",
      texts: [tokens(10, 0), tokens(10, 6), tokens(10, 12)],
    })) as Answer;
    assert.deepEqual(a.vectors[2], [q.vectors[0]![0], q.vectors[1]![0], q.vectors[2]![0]]);
    assert.deepEqual(a.vectors[1], [q.vectors[0]![0], q.vectors[1]![0]]);
    assert.deepEqual(a.vectors[0], [q.vectors[0]![0]]);
  });

  test("more than embed_max_windows windows: windows_over_cap", async () => {
    const code = await refusalOf(client.call("embed.texts", { texts: ["the", tokens(23)] }));
    assert.equal(code, "windows_over_cap");
  });

  test("questions never use windows nor are truncated: a longer one is embed_input_too_large", async () => {
    const q = (await client.call("embed.texts", {
      kind: "question",
      texts: [tokens(10)],
    })) as Answer;
    assert.equal(q.vectors[0]!.length, 1);
    const long = client.call("embed.texts", { kind: "question", texts: [tokens(10), tokens(11)] });
    assert.equal(await refusalOf(long), "embed_input_too_large");
  });
});
