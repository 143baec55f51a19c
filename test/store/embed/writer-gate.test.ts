/**
 * Foreground admission for embedding commits (spec: `embed_writer_wait_ms`, exhaustion
 * `embed_admission_wait_exceeded`): while the walk embeds and commits a page of a data
 * branch, a foreground commit to that branch waits at most embed_writer_wait_ms and is then
 * refused with the code over the socket; other branches, collections and reads are not held;
 * writers that fit in the wait go ahead once the page commits, and the walk keeps up.
 */

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { WriterGate } from "../../../src/store/embed/writer-gate.ts";
import { until } from "../../support/until.ts";
import { embedGroup, refusalOf, serve, stallingWorker, testModel } from "./fixture.ts";

interface Status {
  pending: number;
  records_embedded: number;
  error: { code: string } | null;
}

describe("foreground admission for embedding commits", () => {
  test("a commit to a branch held by a page beyond embed_writer_wait_ms: embed_admission_wait_exceeded", async () => {
    const model = await testModel();
    const served = await serve({
      ...embedGroup(model),
      // Answers start, never a batch: the walk's first page holds notes/main until
      // embed_call_ms kills the worker.
      embed_worker: await stallingWorker(model),
      embed_call_ms: 4000,
      embed_writer_wait_ms: 200,
      embed_question_worker: false,
    });
    try {
      const client = await served.client();
      for (const collection of ["notes", "plain"]) {
        await client.call("collections.create", { collection });
      }
      await client.call("document.put", { collection: "notes", key: "a", value: { text: "x" } });
      await client.call("embed.enable", { collection: "notes", field: "text" });
      // Commits go ahead until the walk reads its page; then the next one waits and is refused.
      let code: string | undefined;
      for (let i = 0; i < 400 && code === undefined; i++) {
        try {
          await client.call("document.put", { collection: "notes", key: "b", value: i });
        } catch (error) {
          code = (error as { code: string }).code;
        }
      }
      assert.equal(code, "embed_admission_wait_exceeded");
      // Still held: deletes and append_prune wait and are refused alike.
      assert.equal(
        await refusalOf(client.call("document.delete", { collection: "notes", key: "a" })),
        "embed_admission_wait_exceeded",
      );
      // Another collection's commits and the held branch's reads are served at once.
      await client.call("document.put", { collection: "plain", key: "k", value: 1 });
      const got = (await client.call("document.get", { collection: "notes", key: "a" })) as {
        found: boolean;
      };
      assert.equal(got.found, true);
    } finally {
      await served.stop();
    }
  });

  test("writers that fit in the wait go ahead after each page, and the walk keeps up", async () => {
    const model = await testModel();
    const served = await serve({ ...embedGroup(model), embed_writer_wait_ms: 60000 });
    try {
      const client = await served.client();
      await client.call("collections.create", { collection: "notes" });
      await client.call("embed.enable", { collection: "notes", field: "text" });
      const flood = [];
      for (let i = 0; i < 300; i++) {
        flood.push(
          client.call("document.put", {
            collection: "notes",
            key: `k${i}`,
            value: { text: "the" },
          }),
        );
      }
      await Promise.all(flood);
      const status = await until("the walk to embed the flood", async () => {
        const s = (await client.call("embed.status", { collection: "notes" })) as Status;
        return s.pending === 0 ? s : undefined;
      });
      assert.equal(status.records_embedded, 300);
      assert.equal(status.error, null);
    } finally {
      await served.stop();
    }
  });

  test("the gate: a wait ends with the page's commit, and its bound spans several pages", async () => {
    const gate = new WriterGate(50);
    assert.equal(gate.wait("c", "main", gate.deadline()), undefined, "a free branch is not held");
    const release = gate.hold("c", "main");
    assert.equal(gate.wait("c", "other", gate.deadline()), undefined, "other branches are free");
    const deadline = gate.deadline();
    const waited = gate.wait("c", "main", deadline)!;
    release();
    await waited;
    // A second page holds the branch again: the same deadline runs out.
    gate.hold("c", "main");
    const code = await refusalOf(gate.wait("c", "main", deadline)!);
    assert.equal(code, "embed_admission_wait_exceeded");
  });
});
