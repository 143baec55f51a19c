// search.text with `idp` (the real skein-idp). A search is decided on what it ranks: a caller
// that may read the whole branch searches it; a partial reader (a key prefix grant) searches
// only under a prefix it may read whole, ranked among those records alone, so no record it
// may not read shows through counts, scores or order (issue #30, item 4); any other search
// of a partial reader is refused, whether or not anything matches.

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { silentLogger } from "../../../src/common/log.ts";
import { EmbedService } from "../../../src/store/embed/service.ts";
import { enableField, fieldStatus } from "../../../src/store/embed/verbs.ts";
import { SearchService } from "../../../src/store/search/service.ts";
import { embedSettings } from "../embed/fixture.ts";
import { agent, DATABASE, idpStore, runIdp } from "../idp/support.ts";
import { testModel } from "./fixture.ts";

const model = await testModel();
const idp = await runIdp();
let embed: EmbedService | undefined;
let search: SearchService | undefined;
const served = await idpStore(idp, {
  placement: true,
  async services(store, dataDir) {
    embed = await EmbedService.start(embedSettings(model), silentLogger());
    embed.startWalk(store);
    search = new SearchService(store, embed, { dataDir }, silentLogger());
    search.start();
    return { embed, search };
  },
});
after(async () => {
  await search?.close();
  await embed?.close();
});

test("a reader of pub/ searches under pub/ only; a search over records it may not read is refused", async () => {
  const admin = await agent(idp, "admin1", [["admin", `db/${DATABASE}`]]);
  const adminClient = await served.connect(admin.pass);
  await adminClient.call("collections.create", { collection: "notes" });
  await adminClient.put("notes", [
    { key: "pub/a", value: { body: "vector search" } },
    { key: "pub/b", value: { body: "the store" } },
    { key: "priv/x", value: { body: "vector search HIDDEN" } },
    { key: "priv/y", value: { body: "vector HIDDEN" } },
  ]);
  // The IdP has no rows for the embed.* verbs yet (src/idp/authzen/actions.ts), so the
  // field is bound in the process, as the verb would.
  enableField(served.store, embed!, "notes", "body");
  for (let i = 0; i < 2400 && fieldStatus(served.store, embed!, "notes").pending > 0; i++) {
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.equal(fieldStatus(served.store, embed!, "notes").pending, 0);
  const everything = await adminClient.search("notes", "body", "vector search", { k: 4 });
  assert.equal(everything.rows.length, 4);

  const { pass } = await agent(idp, "reader-pub", [
    ["read", `db/${DATABASE}/c/notes/b/main/p/pub/`],
  ]);
  const reader = await served.connect(pass);
  for (const mode of ["vector", "keyword", "hybrid"] as const) {
    const answer = (await reader.search("notes", "body", "vector search", {
      k: 4,
      mode,
      prefix: "pub/",
    })) as { rows: { key: string }[]; denied?: number };
    assert.ok(answer.rows.length > 0, mode);
    assert.ok(
      answer.rows.every((r) => r.key.startsWith("pub/")),
      mode,
    );
    assert.equal(answer.denied, 0, mode);
    assert.doesNotMatch(JSON.stringify(answer), /priv|HIDDEN/, mode);
    // Over the branch, or a prefix holding records it may not read: refused, matches or not.
    for (const prefix of [undefined, "priv/", "nothing/"]) {
      const options = { k: 4, mode, ...(prefix === undefined ? {} : { prefix }) };
      await assert.rejects(reader.search("notes", "body", "HIDDEN", options), (error) => {
        assert.equal((error as { code?: string }).code, "permission_denied", `${mode} ${prefix}`);
        return true;
      });
    }
  }
});

test("keyword search: a hidden record's words move no score and no order a partial reader sees", async () => {
  const admin = await agent(idp, "admin2", [["admin", `db/${DATABASE}`]]);
  const adminClient = await served.connect(admin.pass);
  const { pass } = await agent(idp, "reader-words", [
    ["read", `db/${DATABASE}/c/notes/b/main/p/pub/`],
  ]);
  const reader = await served.connect(pass);
  const ask = async () =>
    (
      (await reader.search("notes", "body", "vector store search", {
        k: 4,
        mode: "keyword",
        prefix: "pub/",
      })) as { rows: unknown[] }
    ).rows;
  const before = await ask();
  assert.ok(before.length >= 2, JSON.stringify(before));
  // Hidden records heavy with the question's words: BM25 over the branch would weigh them in.
  await adminClient.put("notes", [
    { key: "priv/w1", value: { body: "store store store HIDDEN" } },
    { key: "priv/w2", value: { body: "search vector store" } },
    { key: "priv/w3", value: { body: "vector vector" } },
  ]);
  assert.deepEqual(await ask(), before);
  // A reader of the whole branch ranks over all of it, as before.
  const all = await adminClient.search("notes", "body", "store", { k: 8, mode: "keyword" });
  assert.ok(all.rows.some((r) => r.key === "priv/w1"));
});
