// `skein-store serve` with `metrics_listen`: a real store process, a real client over its
// socket, and `GET /metrics` on the loopback listener read by the strict Prometheus parser.
// Every family is there with its type and moves with the verbs, commits, cache and
// retention work it counts. Without `metrics_listen` nothing listens.

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { StoreClient } from "../../../src/store/client/client.ts";
import { parsePrometheus, sampleValue } from "../../support/prometheus.ts";
import { type Running, runToEnd, serviceFolder, start, tempRoot, waitFor } from "./harness.ts";

const FAMILIES: [string, string][] = [
  ["skein_store_verb_seconds", "histogram"],
  ["skein_store_commit_seconds", "histogram"],
  ["skein_store_commits_in_flight", "gauge"],
  ["skein_store_node_cache_hits_total", "counter"],
  ["skein_store_node_cache_misses_total", "counter"],
  ["skein_store_node_cache_bytes", "gauge"],
  ["skein_store_retention_runs_total", "counter"],
  ["skein_store_retention_released_total", "counter"],
  ["skein_store_clients", "gauge"],
  ["skein_store_nodes", "gauge"],
  ["skein_store_process_cpu_seconds_total", "counter"],
];

const root = tempRoot("skein-metrics-");

async function setup(name: string, extra: Record<string, unknown>) {
  const dir = join(root, name);
  const { run, file } = await serviceFolder(dir, {
    kept_versions: 1,
    // Every version but the head is released, in a run every 2 branch advances.
    retention: { release_batch: 2, keep: { versions: 1, days: 0 } },
    ...extra,
  });
  const env = { XDG_RUNTIME_DIR: run, SKEIN_LOG_LEVEL: "info" };
  return { file, env, socket: join(run, "skein-store", "store.sock") };
}

/** The metrics port from the listener's log line. */
function metricsPort(running: Running): number | undefined {
  for (const line of running.stderr().split("\n")) {
    if (!line.includes('"metrics listening"')) continue;
    return (JSON.parse(line) as { port: number }).port;
  }
  return undefined;
}

describe("skein-store serve metrics_listen (real process)", () => {
  test("GET /metrics parses strictly and its families move with verbs, commits, cache and retention", async () => {
    const s = await setup("on", { metrics_listen: "127.0.0.1:0" });
    const running = start(["serve", s.file, "--create"], s.env);
    await waitFor(running, () => metricsPort(running) !== undefined, "the metrics listener");
    const base = `http://127.0.0.1:${metricsPort(running)}`;
    const scrape = async () => {
      const response = await fetch(`${base}/metrics`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
      return parsePrometheus(await response.text());
    };
    await waitFor(running, () => running.stderr().includes('"store listening"'), "the socket");

    const before = await scrape();
    for (const [name, type] of FAMILIES) assert.equal(before.get(name)?.type, type, name);

    const client = await StoreClient.connect(s.socket, { client: "metrics-test" });
    await client.call("collections.create", { collection: "c" });
    for (let i = 0; i < 6; i++) {
      await client.put("c", [{ key: "k", value: { i } }]);
    }
    assert.deepEqual(await client.get("c", "k"), { found: true, value: { i: 5 }, version: 7 });
    await assert.rejects(client.call("no.such.verb"), { code: "unknown_verb" });
    await assert.rejects(client.get("nope", "k"), { code: "collection_not_found" });

    const m = await scrape();
    const verbs = (verb: string, outcome: string) =>
      sampleValue(m, "skein_store_verb_seconds", "skein_store_verb_seconds_count", {
        verb,
        outcome,
      });
    assert.equal(verbs("document.put", "ok"), 6);
    assert.equal(verbs("document.get", "ok"), 1);
    assert.equal(verbs("document.get", "collection_not_found"), 1);
    // A name the client made up is never a label value.
    assert.equal(verbs("unknown", "unknown_verb"), 1);
    assert.ok(
      !m.get("skein_store_verb_seconds")!.samples.some((x) => x.labels.verb === "no.such.verb"),
    );
    assert.equal(
      sampleValue(m, "skein_store_commit_seconds", "skein_store_commit_seconds_count", {
        outcome: "durable",
      }),
      6,
    );
    const hits = sampleValue(
      m,
      "skein_store_node_cache_hits_total",
      "skein_store_node_cache_hits_total",
    )!;
    assert.ok(hits > 0, "reads after commits hit the cache");
    assert.equal(
      sampleValue(m, "skein_store_retention_runs_total", "skein_store_retention_runs_total"),
      3,
    );
    assert.ok(
      sampleValue(
        m,
        "skein_store_retention_released_total",
        "skein_store_retention_released_total",
      )! > 0,
    );
    assert.equal(sampleValue(m, "skein_store_clients", "skein_store_clients"), 1);
    assert.ok(sampleValue(m, "skein_store_nodes", "skein_store_nodes", { of: "entries" })! > 0);

    const other = await fetch(`${base}/other`);
    assert.equal(other.status, 404);
    await other.text();
    await client.close();
    running.child.kill("SIGTERM");
    assert.equal((await running.exited).code, 0);
  });

  test("metrics_listen must be a loopback address (decode refusal names the field)", async () => {
    const s = await setup("public", { metrics_listen: "0.0.0.0:9464" });
    const r = await runToEnd(["serve", s.file, "--create"], s.env);
    assert.equal(r.status, 2, r.err);
    assert.match(r.err, /metrics_listen/);
    assert.match(r.err, /loopback/);
  });

  test("a metrics port in use refuses start-up with invalid_metrics_listen and leaves no socket", async () => {
    const { createServer } = await import("node:net");
    const busy = createServer();
    await new Promise<void>((done) => busy.listen(0, "127.0.0.1", done));
    const port = (busy.address() as { port: number }).port;
    try {
      const s = await setup("busy", { metrics_listen: `127.0.0.1:${port}` });
      const r = await runToEnd(["serve", s.file, "--create"], s.env);
      assert.equal(r.status, 2, r.err);
      assert.match(r.err, /invalid_metrics_listen/);
      await assert.rejects(import("node:fs/promises").then((fs) => fs.access(s.socket)));
    } finally {
      busy.close();
    }
  });
});
