/**
 * Start-up of the embedding workers, each failure reached at start-up with the shipped
 * worker (or a stand-in for the file checks and the ready deadline): the store still
 * listens, every other verb is served, and each embedding verb answers the named failure.
 */

import assert from "node:assert/strict";
import { chmod, cp, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { embedGroup, refusalOf, serve, tempRoot, testModel } from "./fixture.ts";

async function failsWith(group: Record<string, unknown>, code: string, text?: string) {
  const served = await serve(group);
  try {
    const client = await served.client();
    assert.equal(await refusalOf(client.call("embed.texts", { texts: ["the store"] })), code);
    // Every non-embedding verb is served.
    await client.call("collections.create", { collection: "c" });
    await client.call("document.put", { collection: "c", key: "k", value: { n: 1 } });
    const got = (await client.call("document.get", { collection: "c", key: "k" })) as {
      value: unknown;
    };
    assert.deepEqual(got.value, { n: 1 });
    const logged = served.logs().find((l) => l.code === code);
    assert.ok(logged, `no log line with ${code}: ${served.running.stderr()}`);
    if (text !== undefined) assert.match(String(logged.msg), new RegExp(text));
  } finally {
    await served.stop();
  }
}

describe("embedding start-up failures leave the store serving", () => {
  test("embed_worker_missing, embed_worker_not_file, embed_worker_not_executable", async () => {
    const model = await testModel();
    const root = await tempRoot();
    const plain = join(root, "plain");
    await writeFile(plain, "#!/bin/sh\n");
    await chmod(plain, 0o644);
    await failsWith(
      { ...embedGroup(model), embed_worker: join(root, "absent") },
      "embed_worker_missing",
    );
    await failsWith({ ...embedGroup(model), embed_worker: root }, "embed_worker_not_file");
    await failsWith({ ...embedGroup(model), embed_worker: plain }, "embed_worker_not_executable");
  });

  test("a worker that never says ready: embed_worker_start_timeout", async () => {
    const model = await testModel();
    const root = await tempRoot();
    const silent = join(root, "silent-worker");
    await writeFile(silent, "#!/bin/sh\nexec sleep 600\n");
    await chmod(silent, 0o755);
    await failsWith(
      { ...embedGroup(model), embed_worker: silent, embed_ready_ms: 300 },
      "embed_worker_start_timeout",
    );
  });

  test("Ready names another model than embed_model_sha256: embed_model_mismatch", async () => {
    const model = await testModel();
    await failsWith(
      { ...embedGroup(model), embed_model_sha256: "0".repeat(64) },
      "embed_model_mismatch",
    );
  });

  test("a model file changed since its manifest: embed_model_mismatch", async () => {
    const model = await testModel();
    const copy = join(await tempRoot(), "changed");
    await cp(model.dir, copy, { recursive: true });
    await writeFile(join(copy, "config.json"), "{}");
    await failsWith({ ...embedGroup(model), embed_model_dir: copy }, "embed_model_mismatch");
  });

  test("a model file absent: embed_model_missing", async () => {
    const model = await testModel();
    const copy = join(await tempRoot(), "partial");
    await cp(model.dir, copy, { recursive: true });
    await rm(join(copy, "onnx", "model.onnx"));
    await failsWith({ ...embedGroup(model), embed_model_dir: copy }, "embed_model_missing");
    const empty = join(await tempRoot(), "empty");
    await mkdir(empty);
    await failsWith({ ...embedGroup(model), embed_model_dir: empty }, "embed_model_missing");
  });

  test("limits the model cannot meet: embed_limits, each rule", async () => {
    const model = await testModel(); // 128 tokens, 16 dims
    const group = embedGroup(model);
    // Above the model's maximum.
    await failsWith({ ...group, embed_tokens: 129 }, "embed_limits", "maximum");
    // No room for one content token after [CLS] and [SEP] (and the prefix).
    await failsWith({ ...group, embed_tokens: 2 }, "embed_limits", "no content token");
    // The largest answer: 64 items × 32 windows × 16 dims does not fit 8192 bytes.
    await failsWith(
      {
        ...group,
        embed_frame_bytes: 8192,
        embed_batch_items: 64,
        embed_windows: true,
        embed_window_overlap_tokens: 4,
      },
      "embed_limits",
      "largest answer",
    );
    // Overlap below embed_tokens (the config allows it) but not below the 30 content tokens.
    await failsWith(
      { ...group, embed_windows: true, embed_window_overlap_tokens: 31 },
      "embed_limits",
      "content tokens",
    );
    // Memory below what the model and a full batch need.
    await failsWith(
      { ...group, embed_memory_bytes: 1000000 },
      "embed_limits",
      "embed_memory_bytes",
    );
  });
});
