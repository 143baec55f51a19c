// Worker documents: every kind's action shape, YAML and JSON, and refusals that name the field.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { loadWorkerDocument, type WorkerKind } from "../../src/worker/document.ts";
import { ACTIVITIES, spawnWorker, tempDir } from "../support/worker-endpoint.ts";

async function write(text: string, ext = "yaml"): Promise<string> {
  const path = join(await tempDir(), `worker.${ext}`);
  await writeFile(path, text);
  return path;
}

describe("worker documents", () => {
  test("a YAML exec document decodes with defaults", async () => {
    const path = await write(
      "name: w1\ntask_queue: q\nactions:\n  greet:\n    command: [echo, hi]\n",
    );
    const doc = await loadWorkerDocument("exec", path);
    assert.equal(doc.name, "w1");
    assert.equal(doc.taskQueue, "q");
    assert.deepEqual([...doc.handlers.keys()], ["greet"]);
  });

  test("a JSON module document loads the module's export", async () => {
    const path = await write(
      JSON.stringify({
        name: "m",
        task_queue: "q",
        actions: { add: { module: ACTIVITIES, export: "add" } },
      }),
      "json",
    );
    const doc = await loadWorkerDocument("module", path);
    const ctx = {
      signal: new AbortController().signal,
      heartbeat() {},
      namespace: "default",
      workflowId: "w",
      runId: "r",
      activityId: 0,
      attempt: 1,
      action: "add",
    };
    assert.equal(await doc.handlers.get("add")!('{"a":1,"b":2}', ctx), '{"sum":3}');
  });

  const refusals: [kind: WorkerKind, text: string, message: RegExp][] = [
    ["exec", "task_queue: q\nactions: {a: {command: [x]}}", /^name: missing required field/],
    ["exec", "name: w\ntask_queue: q\nactions: {}", /^actions: must not be empty/],
    [
      "exec",
      "name: w\ntask_queue: q\nactions: {a: {command: []}}",
      /^actions\.a\.command: must not be empty/,
    ],
    [
      "exec",
      "name: w\ntask_queue: q\nactions: {a: {command: [x], shell: true}}",
      /^actions\.a\.shell: unknown field/,
    ],
    [
      "exec",
      "name: w\ntask_queue: q\nextra: 1\nactions: {a: {command: [x]}}",
      /^extra: unknown field/,
    ],
    [
      "exec",
      "name: 'bad name'\ntask_queue: q\nactions: {a: {command: [x]}}",
      /^name: must be letters/,
    ],
    [
      "exec",
      "name: w\ntask_queue: q\nactions: {a: {command: [x], cancel_grace_ms: 1.5}}",
      /cancel_grace_ms: expected a whole number/,
    ],
    ["exec", "name: w\nname: v\ntask_queue: q", /not valid YAML/],
    [
      "module",
      "name: w\ntask_queue: q\nactions: {a: {module: ./missing.ts}}",
      /^actions\.a\.module: cannot load/,
    ],
    [
      "module",
      `name: w\ntask_queue: q\nactions: {a: {module: ${ACTIVITIES}, export: notAFunction}}`,
      /actions\.a\.export: .* has no exported function "notAFunction"/,
    ],
    [
      "http",
      "name: w\ntask_queue: q\nactions: {a: {url: 'ftp://x/y'}}",
      /^actions\.a\.url: must be an http or https URL/,
    ],
    [
      "http",
      "name: w\ntask_queue: q\nactions: {a: {url: 'http://x/', method: TRACE}}",
      /^actions\.a\.method: must be one of/,
    ],
  ];
  for (const [kind, text, message] of refusals) {
    test(`${kind}: ${message.source}`, async () => {
      const path = await write(text);
      await assert.rejects(loadWorkerDocument(kind, path), (error: Error & { code?: string }) => {
        assert.match(error.message, message);
        assert.equal(error.code, "worker_document_invalid");
        return true;
      });
    });
  }

  test("skein worker exits 1 naming the document and the field", async () => {
    const path = await write("name: w\ntask_queue: q\nactions: {a: {command: []}}");
    const w = spawnWorker(["exec", path]);
    assert.equal(await w.exited, 1);
    assert.match(
      w.stderr(),
      /^skein worker: .*worker\.yaml: actions\.a\.command: must not be empty\n$/,
    );
  });
});
