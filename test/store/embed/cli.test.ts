import assert from "node:assert/strict";
import { cp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { embedCommand } from "../../../src/store/cli/embed.ts";
import { modelCommand } from "../../../src/store/cli/model.ts";
import { until } from "../../support/until.ts";
import { assertRefusal, runCommand } from "../cli/harness.ts";
import { embedGroup, serve, tempRoot, testModel } from "./fixture.ts";

test("model manifest prints the identity; a changed file changes it", async () => {
  const model = await testModel();
  const same = await runCommand(modelCommand, ["manifest", model.dir]);
  assert.equal(same.status, 0, same.err);
  assert.equal(same.out.trim(), model.identity);
  assert.match(same.out.trim(), /^[0-9a-f]{64}$/);
  const copy = join(await tempRoot(), "copy");
  await cp(model.dir, copy, { recursive: true });
  await writeFile(join(copy, "config.json"), '{"hidden_size":16,"max_position_embeddings":64}');
  const changed = await runCommand(modelCommand, ["manifest", copy, "--max-tokens", "64"]);
  assert.equal(changed.status, 0, changed.err);
  assert.notEqual(changed.out.trim(), model.identity);
  const empty = await tempRoot();
  assertRefusal(
    await runCommand(modelCommand, ["manifest", empty]),
    "model",
    "embed_model_missing",
  );
});

test("skein-store embed enable, status and texts; StoreClient's embedding helpers", async () => {
  const model = await testModel();
  const served = await serve(embedGroup(model));
  try {
    const client = await served.client();
    await client.call("collections.create", { collection: "notes" });
    await client.put("notes", [{ key: "a", value: { text: "the store" } }]);
    const socket = ["--socket", served.socket];
    const enabled = await runCommand(embedCommand, [...socket, "enable", "notes", "text"]);
    assert.equal(enabled.status, 0, enabled.err);
    assert.equal(JSON.parse(enabled.out).field, "text");
    await until("nothing pending", async () => (await client.embedStatus("notes")).pending === 0, {
      timeoutMs: 60_000,
      intervalMs: 25,
    });
    const status = await runCommand(embedCommand, [...socket, "status", "notes"]);
    assert.equal(JSON.parse(status.out).records_embedded, 1);
    const texts = await runCommand(embedCommand, [...socket, "texts", "--question", "the store"]);
    const printed = JSON.parse(texts.out) as { vectors: number[][][] };
    const direct = await client.embedTexts(["the store"]);
    assert.deepEqual(printed.vectors, direct.vectors);
    const stored = await client.embedVectors("notes", ["a"]);
    assert.deepEqual(stored.vectors.a, direct.vectors[0]);
  } finally {
    await served.stop();
  }
});
