/**
 * Questions that arrive together are embedded together (#35 item 3): while the question
 * worker embeds one batch, the questions of concurrent `search.text` calls wait in one
 * queue (search/questions.ts) and go to the worker as one request when it is free. The
 * worker here (gated-worker.ts, a real process) holds the first question's batch until the
 * test releases it; 16 more searches from 4 connections then meet it busy. With
 * `embed_waiting` 15, exactly one of them is refused `embed_busy`, which shows the other 15
 * are waiting; once released, the worker sees one request of those 15 texts.
 *
 * A request of several batches has the next batch written to the worker while it embeds
 * one (embed/supervisor.ts), so the worker never waits for the store between batches: with
 * the first batch held, the second has already arrived.
 */

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { serve, until } from "./fixture.ts";
import { embedSettings, gatedWorker, requests } from "./gated.ts";

const WAITING = 15;
test("questions arriving while the worker is busy go to it as one request", {
  timeout: 300_000,
}, async () => {
  const { worker, dir } = await gatedWorker();
  const served = await serve(embedSettings(worker, dir, { embed_waiting: WAITING }));
  try {
    const client = await served.client();
    await client.call("collections.create", { collection: "notes" });
    await client.put(
      "notes",
      ["alpha", "beta", "gamma"].map((body, i) => ({ key: `k${i}`, value: { body } })),
    );
    await client.embedEnable("notes", "body");
    await until(async () => (await client.embedStatus("notes")).pending === 0, "the walk");
    const ask = (c: typeof client, i: number) =>
      c.search("notes", "body", `question ${i}`, { mode: "vector", k: 3, values: false });

    const first = ask(client, 0);
    await until(() => requests(dir, "question").length === 1, "the first question's request");
    const clients = await Promise.all(Array.from({ length: 4 }, () => served.client()));
    const outcomes = Array.from({ length: WAITING + 1 }, (_, i) =>
      ask(clients[i % 4]!, i + 1).then(
        (answer) => ({ answer }),
        (error: { code: string }) => ({ refused: error.code }),
      ),
    );
    // One search meets WAITING questions already waiting: all the others are queued.
    const refused = await Promise.race(
      outcomes.map((o) => o.then((r) => ("refused" in r ? r : new Promise<never>(() => {})))),
    );
    assert.equal(refused.refused, "embed_busy");
    await writeFile(join(dir, "release"), "");

    assert.equal((await first).rows.length, 3);
    const settled = await Promise.all(outcomes);
    const answered = settled.filter((r) => "answer" in r);
    assert.equal(answered.length, WAITING);
    assert.deepEqual(requests(dir, "question"), [1, WAITING]);
  } finally {
    await served.stop();
  }
});

test("the next batch of a request reaches the worker while it embeds one", {
  timeout: 300_000,
}, async () => {
  const { worker, dir } = await gatedWorker();
  const served = await serve(embedSettings(worker, dir, { embed_batch_items: 8 }));
  try {
    const client = await served.client();
    const texts = Array.from({ length: 20 }, (_, i) => `question ${i}`);
    const answer = client.embedTexts(texts, { kind: "question" });
    await until(
      () => requests(dir, "question", "received.jsonl").length === 2,
      "the second batch written while the first is held",
    );
    assert.deepEqual(requests(dir, "question"), [8], "the worker still holds the first batch");
    await writeFile(join(dir, "release"), "");
    assert.equal((await answer).vectors.length, 20);
    assert.deepEqual(requests(dir, "question"), [8, 8, 4]);
  } finally {
    await served.stop();
  }
});
