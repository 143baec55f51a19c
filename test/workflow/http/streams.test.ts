// The console's live streams (issue 24) on the real `skein serve`: a run's history as
// server-sent events, live as commits land, ending with `end`; resuming with `after`;
// refusals before the stream starts (400, 403, 404) as JSON; the transcript stream of an
// attempt that is not live; and streams closing when the client aborts and when the
// server stops (a clean end of the body, not a cut connection).

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { until } from "../../support/until.ts";
import {
  adminToken,
  call,
  type ServerProcess,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";
import { openStream } from "../support/sse.ts";

const TWO_WAITS =
  "name: twowaits\nsteps:\n  - { id: a, wait: { signal: go } }\n  - { id: b, wait: { signal: go } }\noutput: steps.b\n";

describe("live streams (real skein serve)", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess;
  let admin: string;
  const api = (path: string, body: object, token = admin) =>
    call(server.url, "POST", path, { token, body });
  const start = async (namespace = "alpha") => {
    const r = await api("/workflows/start", { namespace, name: "twowaits" });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body as { workflow_id: string; run_id: string };
  };

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir.path, '[namespaces]\ndefault = "alpha"');
    server = await startServe(config);
    admin = await adminToken(dir.path);
    for (const namespace of ["alpha", "beta"]) {
      const r = await api("/workflows/definitions", { namespace, definition: TWO_WAITS });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
  });
  after(async () => {
    await server?.stop();
    await dir?.remove();
  });

  test("history: every event, then each new one as it commits, then end; resume with after", async () => {
    const run = await start();
    const stream = await openStream(server.url, "/workflows/history/stream", admin, {
      workflow_id: run.workflow_id,
    });
    assert.equal(stream.status, 200);
    assert.match(stream.contentType ?? "", /^text\/event-stream/);
    await until("RunStarted on the stream", () => stream.events.length >= 1);
    assert.deepEqual(stream.events[0]!.data.index, 0);
    assert.equal(stream.events[0]!.data.event.type, "RunStarted");
    // A signal is a commit: it appears on the open stream.
    await api("/workflows/signal", {
      workflow_id: run.workflow_id,
      signal: "go",
      payload: { n: 1.5 },
    });
    await until("the first signal on the stream", () =>
      stream.events.some((e) => e.data.event?.type === "SignalReceived"),
    );
    await api("/workflows/signal", {
      workflow_id: run.workflow_id,
      signal: "go",
      payload: { n: 2 },
    });
    assert.equal(await stream.closed, "ended", "the stream ends by itself once the run ended");
    const last = stream.events.at(-1)!;
    assert.deepEqual(last, { event: "end", data: { status: "Completed" } });
    // The streamed events are exactly the run's history, in order, with their indexes.
    const history = (await api("/workflows/history", { workflow_id: run.workflow_id })).body.events;
    const streamed = stream.events.filter((e) => e.event === "history");
    assert.deepEqual(
      streamed.map((e) => e.data.index),
      history.map((_: unknown, i: number) => i),
    );
    assert.deepEqual(
      streamed.map((e) => e.data.event),
      history,
    );
    assert.equal(history.at(-1).type, "RunCompleted");
    assert.ok(history.some((e: { payload?: { n: number } }) => e.payload?.n === 1.5));

    // Resuming: only the events from `after` on, then end at once (the run has ended).
    const resumed = await openStream(server.url, "/workflows/history/stream", admin, {
      workflow_id: run.workflow_id,
      run_id: run.run_id,
      after: 2,
    });
    assert.equal(await resumed.closed, "ended");
    assert.deepEqual(
      resumed.events.map((e) => (e.event === "history" ? e.data.index : e.event)),
      [...history.keys()].slice(2).concat(["end"]),
    );
    const past = await openStream(server.url, "/workflows/history/stream", admin, {
      workflow_id: run.workflow_id,
      after: 1000,
    });
    assert.equal(await past.closed, "ended");
    assert.deepEqual(past.events, [{ event: "end", data: { status: "Completed" } }]);
  });

  test("history: refusals come before the stream, as JSON errors", async () => {
    const run = await start("beta");
    const alphaOnly = await tokenFor(dir.path, { namespaces: ["alpha"] });
    const forbidden = await api(
      "/workflows/history/stream",
      { namespace: "beta", workflow_id: run.workflow_id },
      alphaOnly,
    );
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.error.code, "forbidden");
    const missing = await api("/workflows/history/stream", {
      workflow_id: "0190a6f4-1b2c-7d3e-8f40-123456789abc",
    });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, "run_not_found");
    for (const body of [
      {},
      { workflow_id: "not-a-uuid" },
      { workflow_id: run.workflow_id, after: -1 },
      { workflow_id: run.workflow_id, after: "3" },
      { workflow_id: run.workflow_id, bogus: true },
    ]) {
      const r = await api("/workflows/history/stream", { namespace: "beta", ...body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, "decode_refused", JSON.stringify(r.body));
    }
    const anonymous = await call(server.url, "POST", "/workflows/history/stream", {
      body: { workflow_id: run.workflow_id },
    });
    assert.equal(anonymous.status, 401);
    await api("/workflows/cancel", { namespace: "beta", workflow_id: run.workflow_id });
  });

  test("transcript: an attempt that is not live sends what is stored, then end; refusals", async () => {
    const run = await start();
    const target = { workflow_id: run.workflow_id, run_id: run.run_id, activity_id: 0, attempt: 1 };
    const stream = await openStream(server.url, "/workflows/transcript/stream", admin, target);
    assert.equal(stream.status, 200);
    assert.equal(await stream.closed, "ended");
    assert.deepEqual(stream.events, [{ event: "end", data: {} }]);
    const beta = await start("beta");
    const alphaOnly = await tokenFor(dir.path, { namespaces: ["alpha"] });
    const forbidden = await api(
      "/workflows/transcript/stream",
      { ...target, namespace: "beta", workflow_id: beta.workflow_id, run_id: beta.run_id },
      alphaOnly,
    );
    assert.equal(forbidden.status, 403);
    const wrongRun = await api("/workflows/transcript/stream", { ...target, run_id: beta.run_id });
    assert.equal(wrongRun.status, 404);
    assert.equal(wrongRun.body.error.code, "run_not_found");
    const bad = await api("/workflows/transcript/stream", { ...target, attempt: "one" });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, "decode_refused");
    for (const r of [run, beta]) {
      await api("/workflows/cancel", {
        namespace: r === beta ? "beta" : "alpha",
        workflow_id: r.workflow_id,
      });
    }
  });

  test("a client that aborts closes its stream; the server goes on streaming to others", async () => {
    const run = await start();
    const first = await openStream(server.url, "/workflows/history/stream", admin, {
      workflow_id: run.workflow_id,
    });
    await until("the first stream's RunStarted", () => first.events.length >= 1);
    first.abort();
    assert.ok((await first.closed) instanceof Error, "the client's read is aborted");
    const second = await openStream(server.url, "/workflows/history/stream", admin, {
      workflow_id: run.workflow_id,
    });
    await until("the second stream's RunStarted", () => second.events.length >= 1);
    await api("/workflows/signal", { workflow_id: run.workflow_id, signal: "go" });
    await until("the signal on the second stream", () =>
      second.events.some((e) => e.data.event?.type === "SignalReceived"),
    );
    second.abort();
    await second.closed;
  });

  test("stopping the server ends open streams cleanly (the body ends, it is not cut)", async () => {
    // A server of its own: this one is stopped.
    const own = await tempDir();
    try {
      const stopping = await startServe(
        await writeConfig(own.path, '[namespaces]\ndefault = "alpha"'),
      );
      const token = await adminToken(own.path);
      const reg = await call(stopping.url, "POST", "/workflows/definitions", {
        token,
        body: { definition: TWO_WAITS },
      });
      assert.equal(reg.status, 200);
      const started = await call(stopping.url, "POST", "/workflows/start", {
        token,
        body: { name: "twowaits" },
      });
      const stream = await openStream(stopping.url, "/workflows/history/stream", token, {
        workflow_id: started.body.workflow_id,
      });
      await until("RunStarted before the stop", () => stream.events.length >= 1);
      const exit = await stopping.stop();
      assert.equal(await stream.closed, "ended", "a clean end of the event stream");
      assert.equal(exit.code, 0, stopping.stderr());
      assert.ok(
        stream.events.every((e) => e.event === "history"),
        "no end: the run still runs",
      );
    } finally {
      await own.remove();
    }
  });
});
