/**
 * Embedded fields through the socket with the real worker: embed.enable binds a field, the
 * walk embeds every branch page by page and follows later commits, vectors are versioned
 * with the data (a past version's are readable, a new branch shares its source's), the
 * walk resumes after a SIGKILL of the store with nothing embedded twice or missed, and
 * another model for an embedded field is refused.
 */

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { StoreClient } from "../../../src/store/client/client.ts";
import { parseMarker } from "../../../src/store/embed/fields.ts";
import { ENGINE_DEFAULTS, openStore } from "../../../src/store/engine/index.ts";
import { until } from "../../support/until.ts";
import { embedGroup, refusalOf, serve, testModel } from "./fixture.ts";

interface Status {
  pending: number;
  records_embedded: number;
  model: string;
  branches: { branch: string; head: number; embedded: number | null }[];
  error: { code: string } | null;
}

interface Vectors {
  version: number;
  vectors: Record<string, number[][] | null>;
}

const WORDS = "the store branch version model vector search document question words text".split(
  " ",
);
const text = (i: number) => `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]} ${i}`;

async function settled(client: StoreClient, collection: string): Promise<Status> {
  for (let i = 0; i < 2400; i++) {
    const status = (await client.call("embed.status", { collection })) as Status;
    if (status.pending === 0) return status;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail("the walk did not finish");
}

async function vectorOf(client: StoreClient, t: string): Promise<number[][]> {
  const answer = (await client.call("embed.texts", { texts: [t] })) as { vectors: number[][][] };
  return answer.vectors[0]!;
}

describe("embedded fields", () => {
  test("the walk embeds a branch, follows commits, keeps past versions and shares with new branches", async () => {
    const model = await testModel();
    const served = await serve({ ...embedGroup(model), embed_page_records: 8 });
    try {
      const client = await served.client();
      await client.call("collections.create", { collection: "notes" });
      const records = Array.from({ length: 30 }, (_, i) => ({
        key: `n${String(i).padStart(2, "0")}`,
        value: i % 5 === 4 ? { title: "no text" } : { text: text(i), n: i },
      }));
      await client.call("document.put", { collection: "notes", records });
      const first = await settledAfterEnable(client);
      assert.equal(first.records_embedded, 24);
      assert.equal(first.model, model.identity);
      const v1 = first.branches[0]!.head;
      const at1 = (await client.call("embed.vectors", {
        collection: "notes",
        keys: ["n00", "n04", "__proto__"],
      })) as Vectors;
      assert.equal(at1.version, v1);
      // A key named __proto__ is answered as an own key like any other (no such record: null).
      assert.deepEqual(Object.keys(at1.vectors), ["n00", "n04", "__proto__"]);
      assert.equal(Object.getOwnPropertyDescriptor(at1.vectors, "__proto__")?.value, null);
      assert.deepEqual(at1.vectors.n00, await vectorOf(client, text(0)));
      assert.equal(at1.vectors.n04, null);

      // Later commits: a text changes, a record goes, one gains a text.
      await client.call("document.put", {
        collection: "notes",
        records: [
          { key: "n00", value: { text: "a new text" } },
          { key: "n04", value: { text: "now with text" } },
        ],
      });
      await client.call("document.delete", { collection: "notes", key: "n01" });
      const second = await settled(client, "notes");
      assert.equal(second.records_embedded, 24);
      const head = (await client.call("embed.vectors", {
        collection: "notes",
        keys: ["n00", "n01", "n04"],
      })) as Vectors;
      assert.equal(head.version, second.branches[0]!.head);
      assert.deepEqual(head.vectors.n00, await vectorOf(client, "a new text"));
      assert.equal(head.vectors.n01, null);
      assert.deepEqual(head.vectors.n04, await vectorOf(client, "now with text"));
      // The past version's vectors are still readable.
      const past = (await client.call("embed.vectors", {
        collection: "notes",
        version: v1,
        keys: ["n00", "n01"],
      })) as Vectors;
      assert.deepEqual(past.vectors.n00, await vectorOf(client, text(0)));
      assert.deepEqual(past.vectors.n01, await vectorOf(client, text(1)));

      // A new branch has its source's vectors at its first version.
      await client.call("branches.create", { collection: "notes", branch: "draft" });
      const third = await settled(client, "notes");
      const draft = third.branches.find((b) => b.branch === "draft")!;
      assert.equal(draft.embedded, draft.head);
      const onDraft = (await client.call("embed.vectors", {
        collection: "notes",
        branch: "draft",
        keys: ["n00", "n02"],
      })) as Vectors;
      assert.deepEqual(onDraft.vectors, {
        n00: head.vectors.n00,
        n02: await vectorOf(client, text(2)),
      });
      await client.call("document.put", {
        collection: "notes",
        branch: "draft",
        key: "n02",
        value: { text: "draft text" },
      });
      await settled(client, "notes");
      const changed = (await client.call("embed.vectors", {
        collection: "notes",
        branch: "draft",
        keys: ["n02"],
      })) as Vectors;
      assert.deepEqual(changed.vectors.n02, await vectorOf(client, "draft text"));
      const main = (await client.call("embed.vectors", {
        collection: "notes",
        keys: ["n02"],
      })) as Vectors;
      assert.deepEqual(main.vectors.n02, await vectorOf(client, text(2)));
    } finally {
      await served.stop();
    }
  });

  test("after a SIGKILL the walk resumes: nothing embedded twice, nothing missed", async () => {
    const model = await testModel();
    const group = { ...embedGroup(model), embed_page_records: 4 };
    const served = await serve(group);
    const client = await served.client();
    await client.call("collections.create", { collection: "notes" });
    const total = 400;
    for (let at = 0; at < total; at += 100) {
      const records = Array.from({ length: 100 }, (_, i) => ({
        key: `k${String(at + i).padStart(4, "0")}`,
        value: { text: text(at + i) },
      }));
      await client.call("document.put", { collection: "notes", records });
    }
    await client.call("embed.enable", { collection: "notes", field: "text" });
    await until(
      "40 records embedded",
      async () =>
        ((await client.call("embed.status", { collection: "notes" })) as Status).records_embedded >=
        40,
      { timeoutMs: 60_000, intervalMs: 10 },
    );
    served.running.child.kill("SIGKILL");
    await served.running.exited;

    const again = await serve(group, served.dataDir);
    try {
      const client2 = await again.client();
      const status = await settled(client2, "notes");
      assert.equal(status.records_embedded, total);
      const keys = Array.from({ length: total }, (_, i) => `k${String(i).padStart(4, "0")}`);
      const read = (await client2.call("embed.vectors", { collection: "notes", keys })) as Vectors;
      assert.ok(
        keys.every((k) => read.vectors[k] !== null),
        "every record has vectors",
      );
    } finally {
      await again.stop();
    }
    // The companion's history: one commit per page, pages in key order, none repeated.
    const store = openData(served.dataDir);
    try {
      const rows = store.history("notes~embed", "main", undefined, 1000).rows.reverse();
      // Every commit after the companion's creation is a page; the last one completes.
      const pages = rows.map((r) => parseMarker(r.author)).filter((m) => m !== undefined);
      const afters = pages.map((m) => m.after ?? "\uffff");
      assert.equal(pages.length, total / 4);
      assert.deepEqual(afters, [...afters].sort());
      assert.equal(new Set(afters).size, afters.length);
    } finally {
      await store.close();
    }
  });

  test("a page with deletes and puts is one commit: its vectors never apart from its marker", async () => {
    // A SIGKILL between two commits of one page (deletes, then puts, both marked with the
    // page's end) left the page done without its vectors: the records were never embedded.
    const group = { ...embedGroup(await testModel()), embed_page_records: 4 };
    const served = await serve(group);
    const client = await served.client();
    await client.call("collections.create", { collection: "notes" });
    const records = Array.from({ length: 8 }, (_, i) => ({
      key: `k${i}`,
      value: { text: text(i) },
    }));
    await client.call("document.put", { collection: "notes", records });
    await client.call("embed.enable", { collection: "notes", field: "text" });
    await settled(client, "notes");
    // One diff page: k0's text changes (a put), k1 loses its field (a delete).
    await client.call("document.put", {
      collection: "notes",
      records: [
        { key: "k0", value: { text: text(100) } },
        { key: "k1", value: { other: 1 } },
      ],
    });
    await settled(client, "notes");
    await served.stop();
    const store = openData(served.dataDir);
    try {
      const rows = store.history("notes~embed", "main", undefined, 1000).rows;
      const marked = rows.filter((r) => parseMarker(r.author) !== undefined);
      assert.equal(new Set(marked.map((r) => r.author)).size, marked.length, "one commit a marker");
      const head = { collection: "notes~embed", branch: "main" };
      assert.equal(store.get(head, "k1").found, false);
      assert.equal(store.get(head, "k0").found, true);
    } finally {
      await store.close();
    }
  });

  test("another model for an embedded field: embed_model_change_not_available", async () => {
    const model = await testModel();
    const served = await serve(embedGroup(model));
    const client = await served.client();
    await client.call("collections.create", { collection: "notes" });
    await client.call("document.put", { collection: "notes", key: "a", value: { text: "the" } });
    await client.call("embed.enable", { collection: "notes", field: "text" });
    await settled(client, "notes");
    await served.stop();
    const other = await testModel({ seed: 2 });
    const again = await serve(embedGroup(other), served.dataDir);
    try {
      const client2 = await again.client();
      const code = await refusalOf(
        client2.call("embed.enable", { collection: "notes", field: "text" }),
      );
      assert.equal(code, "embed_model_change_not_available");
      const status = (await client2.call("embed.status", { collection: "notes" })) as Status;
      assert.equal(status.error?.code, "embed_model_change_not_available");
      assert.equal(status.model, model.identity);
    } finally {
      await again.stop();
    }
  });
});

/** The stopped store's data directory, opened in this process to read the companion. */
function openData(dataDir: string) {
  return openStore({
    dataDir,
    branchCacheBytesPerShard: 1 << 20,
    maxPage: 1000,
    ...ENGINE_DEFAULTS,
  });
}

async function settledAfterEnable(client: StoreClient): Promise<Status> {
  await client.call("embed.enable", { collection: "notes", field: "$.text" });
  return settled(client, "notes");
}
