// search.text with `idp` (the real skein-idp): decided like document.list, after the answer
// is read, each row needs read on its record; denied rows are left out, counted in
// `denied`, and nothing of them (key, value) is shown.

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
  search?.close();
  await embed?.close();
});

test("a reader of pub/ finds pub/ records only; the others are counted, never shown", async () => {
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
    const answer = (await reader.search("notes", "body", "vector search", { k: 4, mode })) as {
      rows: { key: string }[];
      denied?: number;
    };
    assert.ok(answer.rows.length > 0, mode);
    assert.ok(
      answer.rows.every((r) => r.key.startsWith("pub/")),
      mode,
    );
    assert.ok((answer.denied ?? 0) >= 1, mode);
    assert.doesNotMatch(JSON.stringify(answer), /priv|HIDDEN/, mode);
  }
});
