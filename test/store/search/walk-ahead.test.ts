/**
 * The walk reads a pass's next page and sends it to the worker before committing the
 * current one (embed/walk.ts), one such page per branch: with two branches walking at
 * once, each page is still embedded once. A single page held for whichever branch went
 * last was dropped by the other branch's turn, and both walks embedded their pages twice.
 * The worker (gated-worker.ts, a real process) logs every batch it takes; the test counts
 * the document texts against the records that needed vectors, and checks each branch's
 * records are all embedded.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { serve, settled } from "./fixture.ts";
import { embedSettings, gatedWorker, requests } from "./gated.ts";

const RECORDS = 40;

const page = (prefix: string, round: number) =>
  Array.from({ length: RECORDS }, (_, i) => ({
    key: `${prefix}${String(i).padStart(3, "0")}`,
    value: { body: `${prefix} text ${i} of round ${round}` },
  }));

test("two branches walked at once embed each page once", { timeout: 300_000 }, async () => {
  const { worker, dir } = await gatedWorker();
  // Pages of 8 and batches of 4: every pass has several pages, each several batches.
  const served = await serve(
    embedSettings(worker, dir, { embed_page_records: 8, embed_batch_items: 4 }),
  );
  try {
    const client = await served.client();
    await client.call("collections.create", { collection: "notes" });
    await client.put("notes", page("m", 0));
    await client.embedEnable("notes", "body");
    await settled(client, "notes");
    await client.call("branches.create", { collection: "notes", branch: "side" });
    // The side branch takes main's vectors as they are (no text embedded), before both move.
    await settled(client, "notes");
    await client.put("notes", page("m", 1));
    await client.put("notes", page("s", 1), { branch: "side" });
    await settled(client, "notes");

    const texts = requests(dir, "document").reduce((a, b) => a + b, 0);
    assert.equal(texts, 3 * RECORDS, "main's first pass, then main's and side's changes");
    for (const branch of ["main", "side"]) {
      const keys = (branch === "main" ? page("m", 1) : [...page("m", 0), ...page("s", 1)]).map(
        (r) => r.key,
      );
      const got = await client.embedVectors("notes", keys, { branch });
      const embedded = Object.values(got.vectors).filter((v) => v !== null);
      assert.equal(embedded.length, keys.length, `${branch}'s records`);
    }
  } finally {
    await served.stop();
  }
});
