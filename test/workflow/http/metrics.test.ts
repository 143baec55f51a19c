// `GET /metrics` on the real `skein serve` (SQLite) with a real module worker: who may read
// it, that the exposition parses strictly as Prometheus text, that every family the issue
// names is there, and that each moves with the work it counts. Timings are not asserted.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { RETRIED_CHAIN } from "../../fixtures/retried-chain.ts";
import { type Family, parsePrometheus, sampleValue } from "../../support/prometheus.ts";
import { until as waitUntil } from "../../support/until.ts";
import { moduleWorker, type WorkerProcess } from "../../support/worker-endpoint.ts";
import { call, serveForSuite, tokenFor } from "../support/server.ts";

/** Five members that hold until cancelled, against a ceiling of 2 and one worker slot. */
const FAN = `
name: fan
task_queue: q
steps:
  - id: all
    collect:
      items: input.xs
      step: { id: one, call: { action: hold, input: "{ 'ms': 600000 }" } }
`;

/** Every family the issue names, with its Prometheus type. */
const FAMILIES: [name: string, type: string][] = [
  ["skein_runs_held", "gauge"],
  ["skein_runs_ended_total", "counter"],
  ["skein_activity_seconds", "histogram"],
  ["skein_outbox_claimed", "gauge"],
  ["skein_outbox_waiting", "gauge"],
  ["skein_outbox_ceiling", "gauge"],
  ["skein_matcher_backlog", "gauge"],
  ["skein_matcher_holding", "gauge"],
  ["skein_commit_seconds", "histogram"],
  ["skein_commit_batch_runs", "histogram"],
  ["skein_commit_batch_events", "histogram"],
  ["skein_commit_failures_total", "counter"],
  ["skein_http_request_seconds", "histogram"],
  ["skein_workers_connected", "gauge"],
  ["skein_process_cpu_seconds_total", "counter"],
];

describe("GET /metrics (real skein serve, real worker)", () => {
  let worker: WorkerProcess | undefined;
  // Registered first so that the worker stops before the server does.
  after(async () => {
    worker?.kill();
    await worker?.exited;
  });
  const s = serveForSuite(
    '[namespaces]\ndefault = "default"\nmax_in_flight_activities = 2\n[outbox]\nenabled = true',
  );

  async function scrape(): Promise<Map<string, Family>> {
    const response = await fetch(`${s.server.url}/metrics`, {
      headers: { authorization: `Bearer ${s.admin}` },
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    return parsePrometheus(await response.text());
  }

  /** Scrapes until `check` holds (levels settle as the worker and engine act). */
  function until(check: (m: Map<string, Family>) => boolean): Promise<Map<string, Family>> {
    return waitUntil("metrics to reach the expected levels", async () => {
      const metrics = await scrape();
      return check(metrics) ? metrics : undefined;
    });
  }

  test("needs a bearer granted every namespace: none is 401, one namespace is 403", async () => {
    assert.equal((await call(s.server.url, "GET", "/metrics")).status, 401);
    const narrow = await tokenFor(s.dir.path, { namespaces: ["default"] });
    const r = await call(s.server.url, "GET", "/metrics", { token: narrow });
    assert.deepEqual([r.status, r.body.error.code], [403, "forbidden"]);
    const wide = await tokenFor(s.dir.path, { namespaces: "*" });
    const response = await fetch(`${s.server.url}/metrics`, {
      headers: { authorization: `Bearer ${wide}` },
    });
    assert.equal(response.status, 200);
    await response.text();
  });

  test("every named family is exposed with its type, parsed strictly", async () => {
    const metrics = await scrape();
    for (const [name, type] of FAMILIES) {
      assert.equal(metrics.get(name)?.type, type, `${name} should be a ${type}`);
    }
    assert.equal(sampleValue(metrics, "skein_outbox_ceiling", "skein_outbox_ceiling"), 2);
  });

  test("activities, commits, run ends and HTTP routes move with the work", async () => {
    worker = await moduleWorker(s.dir.path, {
      endpoint: s.server.grpc!,
      token: s.admin,
      actions: ["inc", "flaky", "hold"],
      args: ["--namespace", "default", "--concurrency", "1"],
    });
    await until(
      (m) =>
        sampleValue(m, "skein_workers_connected", "skein_workers_connected", { kind: "module" }) ===
        1,
    );
    for (const definition of [RETRIED_CHAIN, FAN]) {
      const r = await call(s.server.url, "POST", "/workflows/definitions", {
        token: s.admin,
        body: { definition },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    const start = await call(s.server.url, "POST", "/workflows/start", {
      token: s.admin,
      body: { name: "chain", input: { n: 1 } },
    });
    assert.equal(start.status, 200);
    const done = await call(s.server.url, "POST", "/workflows/describe", {
      token: s.admin,
      body: { workflow_id: start.body.workflow_id, wait_ms: 30_000 },
    });
    assert.equal(done.body.run.status, "Completed");

    const after = await until(
      (m) =>
        (sampleValue(m, "skein_runs_ended_total", "skein_runs_ended_total", {
          status: "Completed",
        }) ?? 0) >= 1,
    );
    const count = (outcome: string) =>
      sampleValue(after, "skein_activity_seconds", "skein_activity_seconds_count", { outcome });
    // inc once, flaky twice (its first attempt fails by design).
    assert.equal(count("completed"), 2);
    assert.equal(count("failed"), 1);
    assert.ok((sampleValue(after, "skein_commit_seconds", "skein_commit_seconds_count") ?? 0) > 0);
    assert.ok(
      (sampleValue(after, "skein_commit_batch_events", "skein_commit_batch_events_sum") ?? 0) >= 7,
    );
    const started = sampleValue(
      after,
      "skein_http_request_seconds",
      "skein_http_request_seconds_count",
      {
        method: "POST",
        route: "/workflows/start",
        code: "200",
      },
    );
    assert.equal(started, 1);
  });

  test("outbox claims stop at the ceiling per namespace; backlog and held runs show; cancel ends", async () => {
    const start = await call(s.server.url, "POST", "/workflows/start", {
      token: s.admin,
      body: { name: "fan", input: { xs: [1, 2, 3, 4, 5] } },
    });
    assert.equal(start.status, 200);
    // One member runs (its row is done on placement); two are claimed and wait in the matcher
    // for the single slot; the ceiling (2) keeps the last two pending in the outbox.
    const held = await until(
      (m) =>
        sampleValue(m, "skein_outbox_claimed", "skein_outbox_claimed", { namespace: "default" }) ===
          2 &&
        sampleValue(m, "skein_outbox_waiting", "skein_outbox_waiting", { namespace: "default" }) ===
          2,
    );
    assert.equal(sampleValue(held, "skein_matcher_backlog", "skein_matcher_backlog"), 2);
    assert.equal(sampleValue(held, "skein_matcher_holding", "skein_matcher_holding"), 3);
    assert.equal(sampleValue(held, "skein_runs_held", "skein_runs_held", { status: "Running" }), 1);

    const cancel = await call(s.server.url, "POST", "/workflows/cancel", {
      token: s.admin,
      body: { workflow_id: start.body.workflow_id },
    });
    assert.equal(cancel.body.applied, true);
    const ended = await until(
      (m) =>
        sampleValue(m, "skein_runs_ended_total", "skein_runs_ended_total", {
          status: "Cancelled",
        }) === 1,
    );
    assert.equal(
      sampleValue(ended, "skein_runs_held", "skein_runs_held", { status: "Running" }),
      0,
    );
    assert.equal(
      sampleValue(ended, "skein_outbox_claimed", "skein_outbox_claimed", { namespace: "default" }),
      0,
    );
  });

  test("routes are labelled by pattern: an unknown URL is `unmatched`, never its text", async () => {
    await call(s.server.url, "GET", "/no/such/route-12345", { token: s.admin });
    const metrics = await scrape();
    const routes = new Set(
      metrics.get("skein_http_request_seconds")!.samples.map((s) => s.labels.route),
    );
    assert.ok(routes.has("unmatched"));
    assert.ok(![...routes].some((r) => r?.includes("12345")));
  });
});
