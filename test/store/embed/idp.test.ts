/**
 * Embeddings in a store with `idp` and placement, against the real `skein-idp` and the real
 * embed worker: the embedding verbs are decided like any act (enable needs admin on the
 * collection, status and vectors read), the store's own vector collections are never placed
 * at the identity provider nor listed, and cannot be named by a client.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { silentLogger } from "../../../src/common/log.ts";
import { EmbedService } from "../../../src/store/embed/service.ts";
import { agent, DATABASE, idpStore, runIdp } from "../idp/support.ts";
import { embedSettings, refusalOf, testModel, walked } from "./fixture.ts";

const model = await testModel();
const settings = embedSettings(model);

test("with idp: embedding verbs are decided, and vector collections are neither placed nor listed", async () => {
  const idp = await runIdp();
  const embed = await EmbedService.start(settings, silentLogger());
  assert.equal(embed.failure, undefined);
  const served = await idpStore(idp, { placement: true, embed });
  const admin = await served.connect(
    (await agent(idp, "e-admin", [["admin", `db/${DATABASE}`]])).pass,
  );
  await admin.call("collections.create", { collection: "notes" });
  await admin.put("notes", [{ key: "a", value: { text: "the store" } }]);
  await admin.call("embed.enable", { collection: "notes", field: "text" });
  await walked(admin, "notes");

  // The store's own collections exist but are not listed, even to a database admin.
  const listed = (await admin.call("collections.list", {})) as {
    rows: { name: string }[];
    denied: number;
  };
  assert.deepEqual([listed.rows.map((r) => r.name), listed.denied], [["notes"], 0]);
  // Nor can a client name them: the socket refuses the name before any decision.
  assert.equal(
    await refusalOf(admin.call("document.list", { collection: "notes~embed" })),
    "invalid_request",
  );

  // A reader of the collection reads its vectors; it may not bind fields.
  const reader = await served.connect(
    (await agent(idp, "e-reader", [["read", `db/${DATABASE}/c/notes`]])).pass,
  );
  const vectors = (await reader.call("embed.vectors", { collection: "notes", keys: ["a"] })) as {
    vectors: Record<string, unknown>;
  };
  assert.notEqual(vectors.vectors.a, null);
  assert.equal(
    await refusalOf(reader.call("embed.enable", { collection: "notes", field: "other" })),
    "permission_denied",
  );
  // Without a grant on the collection, its embedding is closed too.
  const stranger = await served.connect((await agent(idp, "e-stranger", [])).pass);
  for (const verb of ["embed.status", "embed.vectors"]) {
    const args =
      verb === "embed.vectors" ? { collection: "notes", keys: ["a"] } : { collection: "notes" };
    assert.equal(await refusalOf(stranger.call(verb, args)), "permission_denied", verb);
  }

  // Only the data collection and its main branch were placed at the identity provider.
  const placed = idp
    .output()
    .split("\n")
    .filter((line) => line.includes('"placed"') || line.includes("placed"))
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { collection?: string });
  assert.ok(
    placed.some((p) => p.collection === "notes"),
    idp.output(),
  );
  assert.ok(!placed.some((p) => p.collection?.includes("~")));
  assert.deepEqual(served.warnings, []);
});
