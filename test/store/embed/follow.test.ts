/**
 * Embedding storage follows its data (src/store/embed/follow.ts): deleting a data branch
 * deletes its vectors' branch, deleting a collection deletes its vectors and its binding
 * (a new collection of that name starts unembedded), and the store's own collections
 * (`~embed`, `NAME~embed`) never appear in collections.list.
 */

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ENGINE_DEFAULTS, openStore } from "../../../src/store/engine/index.ts";
import { embedGroup, refusalOf, serve, testModel, walked } from "./fixture.ts";

describe("embedding storage follows its data", () => {
  test("deleting a branch or a collection deletes its vectors; companions are not listed", async () => {
    const model = await testModel();
    const served = await serve(embedGroup(model));
    let dataDir: string;
    try {
      const client = await served.client();
      await client.call("collections.create", { collection: "notes" });
      await client.call("document.put", { collection: "notes", key: "a", value: { text: "the" } });
      await client.call("branches.create", { collection: "notes", branch: "draft" });
      await client.call("embed.enable", { collection: "notes", field: "text" });
      await walked(client, "notes");
      const onDraft = { collection: "notes", branch: "draft", keys: ["a"] };
      await client.call("embed.vectors", onDraft);

      const listed = (await client.call("collections.list", {})) as { rows: { name: string }[] };
      assert.deepEqual(
        listed.rows.map((r) => r.name),
        ["notes"],
      );
      // Paging counts only listed collections.
      const first = (await client.call("collections.list", { limit: 1 })) as {
        rows: { name: string }[];
        next: string | null;
      };
      assert.deepEqual([first.rows.map((r) => r.name), first.next], [["notes"], null]);

      await client.call("branches.delete", { collection: "notes", branch: "draft" });
      assert.equal(
        await refusalOf(client.call("embed.vectors", onDraft)),
        "embed_version_not_embedded",
      );
      // A new branch of the old name starts from main's vectors, not the deleted ones.
      await client.call("branches.create", { collection: "notes", branch: "draft" });
      await walked(client, "notes");
      await client.call("embed.vectors", onDraft);

      await client.call("collections.delete", { collection: "notes" });
      await client.call("collections.create", { collection: "notes" });
      assert.equal(
        await refusalOf(client.call("embed.status", { collection: "notes" })),
        "embed_field_not_found",
      );
      dataDir = served.dataDir;
    } finally {
      await served.stop();
    }
    const store = openStore({
      dataDir,
      branchCacheBytesPerShard: 1 << 20,
      maxPage: 1000,
      ...ENGINE_DEFAULTS,
    });
    try {
      assert.throws(() => store.listBranches("notes~embed"), { code: "collection_not_found" });
    } finally {
      await store.close();
    }
  });
});
