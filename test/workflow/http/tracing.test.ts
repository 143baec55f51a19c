// OpenTelemetry tracing (`tracing.enabled`): a real `skein serve` with a TracerProvider
// registered by `node --import` (test/fixtures/otel-recorder.ts, as an operator's SDK
// set-up), a real module worker and a run with a retried activity. The run is one
// `skein.run` span; each attempt a `skein.activity` child in the same trace, a failed
// attempt marked as an error. With tracing off (the default) nothing is recorded.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { RETRIED_CHAIN } from "../../fixtures/retried-chain.ts";
import { moduleWorker } from "../../support/worker-endpoint.ts";
import { adminToken, call, startServe, tempDir, writeConfig } from "../support/server.ts";

const RECORDER = fileURLToPath(new URL("../../fixtures/otel-recorder.ts", import.meta.url));

interface RecordedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
}

async function spans(file: string): Promise<RecordedSpan[]> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as RecordedSpan);
}

/** Runs the chain once on a server whose recorder writes spans to `file`. */
async function runChain(file: string, tracing: boolean) {
  const dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `[namespaces]\ndefault = "default"\n[tracing]\nenabled = ${tracing}`,
  );
  const server = await startServe(config, [], {
    NODE_OPTIONS: `--import=${RECORDER}`,
    SKEIN_TEST_SPANS: file,
  });
  const admin = await adminToken(dir.path);
  const worker = await moduleWorker(dir.path, {
    endpoint: server.grpc!,
    token: admin,
    actions: ["inc", "flaky"],
    args: ["--namespace", "default"],
  });
  try {
    const registered = await call(server.url, "POST", "/workflows/definitions", {
      token: admin,
      body: { definition: RETRIED_CHAIN },
    });
    assert.equal(registered.status, 200);
    const start = await call(server.url, "POST", "/workflows/start", {
      token: admin,
      body: { name: "chain", input: { n: 1 } },
    });
    const done = await call(server.url, "POST", "/workflows/describe", {
      token: admin,
      body: { workflow_id: start.body.workflow_id, wait_ms: 30_000 },
    });
    assert.equal(done.body.run.status, "Completed");
    return { runId: start.body.run_id as string, workflowId: start.body.workflow_id as string };
  } finally {
    worker.kill();
    await worker.exited;
    // The run's span ends with the commit of its end, before describe answers.
    await server.stop();
    await dir.remove();
  }
}

describe("tracing.enabled: run and activity spans (real server, real worker)", () => {
  test("one run span; one child span per attempt in its trace; a failed attempt is an error", async (t) => {
    const dir = await tempDir();
    t.after(() => dir.remove());
    const file = join(dir.path, "spans.jsonl");
    const { runId, workflowId } = await runChain(file, true);
    const all = await spans(file);
    const runs = all.filter((s) => s.name === "skein.run");
    assert.equal(runs.length, 1);
    const run = runs[0]!;
    assert.equal(run.attributes["skein.run_id"], runId);
    assert.equal(run.attributes["skein.workflow_id"], workflowId);
    assert.equal(run.attributes["skein.status"], "Completed");
    const activities = all.filter((s) => s.name === "skein.activity");
    assert.deepEqual(
      activities.map((s) => [
        s.attributes["skein.action"],
        s.attributes["skein.attempt"],
        s.attributes["skein.outcome"],
      ]),
      [
        ["inc", 1, "completed"],
        ["flaky", 1, "failed"],
        ["flaky", 2, "completed"],
      ],
    );
    for (const span of activities) {
      assert.equal(span.traceId, run.traceId);
      assert.equal(span.parentSpanId, run.spanId);
    }
    assert.deepEqual(activities[1]!.status, { code: 2, message: "flaky" });
  });

  test("off by default: the same run records no span", async (t) => {
    const dir = await tempDir();
    t.after(() => dir.remove());
    const file = join(dir.path, "spans.jsonl");
    await runChain(file, false);
    assert.deepEqual(await spans(file), []);
  });
});
