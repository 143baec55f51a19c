// The console's stream reader (console/ui/api.js `follow`) run in Node against a real
// `skein serve`: it follows a run's history as events commit, and when the server goes away
// mid-stream (a stream ends without `end`) it reconnects with `after` to the restarted
// server on the same address, so every event arrives once, in order, through to `end`.

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { until } from "../../support/until.ts";
import { freePort } from "../../support/worker-endpoint.ts";
import {
  call,
  type ServerProcess,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";

// The module is the browser's own file; it keeps the bearer in sessionStorage.
const store = new Map<string, string>();
Object.assign(globalThis, {
  sessionStorage: {
    getItem: (k: string) => store.get(k) ?? null,
    setItem: (k: string, v: string) => store.set(k, v),
    removeItem: (k: string) => store.delete(k),
  },
});
const modulePath = new URL("../../../console/ui/api.js", import.meta.url).href;
const api = (await import(modulePath)) as {
  setBase(origin: string): void;
  token: { set(value: string): void };
  follow(
    path: string,
    body: object,
    handlers: {
      onItem(data: { index: number; event: { type: string } }): void;
      onEnd(data: { status: string }): void;
      onError(error: Error): void;
    },
  ): () => void;
};

const dir = await tempDir();
after(() => dir.remove());
const configFile = await writeConfig(dir.path, '[namespaces]\ndefault = "default"');
const listen = `127.0.0.1:${await freePort()}`;
const serve = () => startServe(configFile, ["--listen", listen]);

test("follow resumes across a server restart: each event once, in order, to the end", async () => {
  let server: ServerProcess = await serve();
  after(() => server.stop());
  const token = await tokenFor(dir.path, { namespaces: "*" });
  const post = (path: string, body: object) =>
    call(server.url, "POST", path, { token, body }).then((r) => {
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body;
    });
  await post("/workflows/definitions", {
    definition:
      "name: two_waits\nsteps:\n  - { id: a, wait: { signal: a } }\n  - { id: b, wait: { signal: b } }\n",
  });
  const { workflow_id } = await post("/workflows/start", { name: "two_waits" });
  api.setBase(server.url);
  api.token.set(token);
  const seen: { index: number; type: string }[] = [];
  let ended: string | undefined;
  let failed: Error | undefined;
  const stop = api.follow(
    "/workflows/history/stream",
    { workflow_id },
    {
      onItem: (data) => seen.push({ index: data.index, type: data.event.type }),
      onEnd: (data) => {
        ended = data.status;
      },
      onError: (error) => {
        failed = error;
      },
    },
  );
  after(stop);
  await post("/workflows/signal", { workflow_id, signal: "a" });
  await until("the first signal streamed", () => seen.some((e) => e.type === "SignalReceived"));
  // The server goes away with the stream open; the reader retries until it is back.
  await server.stop();
  server = await serve();
  await post("/workflows/signal", { workflow_id, signal: "b" });
  await until("the stream's end", () => ended ?? failed);
  assert.equal(failed, undefined);
  assert.equal(ended, "Completed");
  assert.deepEqual(
    seen.map((e) => e.index),
    seen.map((_, i) => i),
  );
  const history = await post("/workflows/history", { workflow_id });
  assert.deepEqual(
    seen.map((e) => e.type),
    history.events.map((e: { type: string }) => e.type),
  );
  assert.equal(seen.filter((e) => e.type === "SignalReceived").length, 2);
});
