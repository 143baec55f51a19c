// The transcript stream of a live agent attempt, end to end: `skein serve` (SQLite), a real
// `skein worker agent` holding the agent transport, and the scripted model. The stream sends
// the stored entries, then each new one as the worker appends it (an injected message shows
// up live), and ends once the attempt is over; a reconnect with `after` resumes.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type ScriptedModel, startScriptedModel } from "../../../src/testing/scripted-model.ts";
import { until } from "../../support/until.ts";
import {
  call,
  type ServerProcess,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";
import { openStream } from "../support/sse.ts";
import { ASK, spawnAgentWorker } from "./support.ts";

let dir: { path: string; remove: () => Promise<void> };
let server: ServerProcess;
let model: ScriptedModel;
let token: string;
let worker: Awaited<ReturnType<typeof spawnAgentWorker>>;

const api = (path: string, body: object) => call(server.url, "POST", path, { token, body });

before(async () => {
  dir = await tempDir();
  model = await startScriptedModel();
  server = await startServe(await writeConfig(dir.path, '[namespaces]\ndefault = "default"'));
  token = await tokenFor(dir.path, { subject: "operator", namespaces: "*", worker: true });
  assert.equal((await api("/workflows/definitions", { definition: ASK })).status, 200);
  const agent = { base_url: model.url, model: "scripted", system: "Be brief.", max_turns: 5 };
  worker = await spawnAgentWorker({
    dir: dir.path,
    endpoint: server.grpc!,
    token,
    actions: {
      assistant: { agent },
      echo: {
        description: "echoes",
        exec: { command: [process.execPath, "-e", "process.stdin.pipe(process.stdout)"] },
      },
    },
  });
});

after(async () => {
  worker?.kill();
  await server?.stop();
  await model?.close();
  await dir?.remove();
});

test("a live attempt's transcript streams as it grows, then ends; after resumes", async () => {
  const seen = model.requests.length;
  // A tool call first, held by the model for a while: the attempt stays live meanwhile.
  model.push(
    { tool_calls: [{ id: "c1", name: "echo", arguments: '{"x":1}' }], delay_ms: 1500 },
    { content: "ok" },
  );
  const started = await api("/workflows/start", { name: "ask", input: { q: "hello" } });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const workflowId = started.body.workflow_id;
  await until("the model is called", () => model.requests.length > seen);
  const attempt = await until("a live attempt", async () => {
    const r = await api("/workflows/attempts", { workflow_id: workflowId });
    return r.body.attempts?.[0];
  });
  const target = {
    workflow_id: workflowId,
    run_id: attempt.run_id,
    activity_id: attempt.activity_id,
    attempt: attempt.attempt,
  };
  const stream = await openStream(server.url, "/workflows/transcript/stream", token, target);
  assert.equal(stream.status, 200);
  const text = "also mention the weather";
  const injected = await api("/workflows/intervene", {
    ...target,
    kind: { kind: "InjectMessage", text, priority: { priority: "Normal" } },
  });
  assert.equal(injected.body.outcome.outcome, "Applied");
  // The injected message reaches the stream while the attempt is still live.
  await until("the injected message on the stream", () =>
    stream.events.some((e) => JSON.stringify(e.data.entry ?? null).includes(text)),
  );
  assert.equal(await stream.closed, "ended", "the stream ends once the attempt is over");
  assert.deepEqual(stream.events.at(-1), { event: "end", data: {} });
  const entries = (await api("/workflows/transcript", target)).body.entries;
  const streamed = stream.events.filter((e) => e.event === "entry");
  assert.deepEqual(
    streamed.map((e) => e.data.index),
    entries.map((_: unknown, i: number) => i),
  );
  assert.deepEqual(
    streamed.map((e) => e.data.entry),
    entries,
  );
  assert.ok(entries.length >= 2);

  const resumed = await openStream(server.url, "/workflows/transcript/stream", token, {
    ...target,
    after: entries.length - 1,
  });
  assert.equal(await resumed.closed, "ended");
  assert.deepEqual(resumed.events, [
    { event: "entry", data: { index: entries.length - 1, entry: entries.at(-1) } },
    { event: "end", data: {} },
  ]);
});
