// A bad server cannot crash an agent worker: a real `skein worker agent` process, a real worker
// endpoint announcing a real WebSocket server as its agent transport, and that server sending
// messages outside the protocol. The worker closes the socket with a named refusal (1003 for a
// binary frame, 1008 otherwise), stays up, and dials again.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { before, test } from "node:test";
import { WebSocketServer } from "ws";
import { until } from "../support/until.ts";
import {
  IDLE_AGENTS,
  sessions,
  spawnWorker,
  startEndpoint,
  workerFiles,
} from "../support/worker-endpoint.ts";

let doc: string;
let token: string;

before(async () => {
  ({ doc, token } = await workerFiles("agents.json", IDLE_AGENTS));
});

const BAD: (string | Buffer)[] = [
  JSON.stringify({ type: "control" }),
  "null",
  JSON.stringify({ type: "commit", id: 5 }),
  JSON.stringify({
    type: "control",
    id: "00000000-0000-4000-8000-000000000001",
    ref: { run_id: "00000000-0000-4000-8000-000000000002", activity_id: 0, attempt: 1 },
    control: { kind: { kind: "Explode" }, subject: "s", at: "t" },
  }),
  "{not json",
  Buffer.from([1, 2, 3]),
];

test("every message outside the protocol closes the link; the worker stays up and redials", async () => {
  const server = createServer();
  const wss = new WebSocketServer({ server });
  const closes: { code: number; reason: string }[] = [];
  let next = 0;
  wss.on("connection", (socket) => {
    const message = BAD[next++];
    socket.on("close", (code, reason) => closes.push({ code, reason: reason.toString() }));
    if (message !== undefined) socket.send(message, { binary: Buffer.isBuffer(message) });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const port = (server.address() as AddressInfo).port;
  const { endpoint, address } = await startEndpoint({ agentPort: port });
  const worker = spawnWorker(["agent", doc, "--endpoint", address, "--token-file", token]);
  try {
    await sessions(endpoint, 1);
    await until(
      () => `every bad message's close: ${worker.stderr()}`,
      () => closes.length >= BAD.length,
    );
    assert.equal(closes.length, BAD.length, worker.stderr());
    for (const [i, close] of closes.entries()) {
      assert.equal(close.code, i === BAD.length - 1 ? 1003 : 1008, JSON.stringify(close));
      assert.match(close.reason, /^invalid_message: /);
    }
    // Still up, still serving, still dialling the transport.
    assert.equal(worker.child.exitCode, null, worker.stderr());
    assert.equal(endpoint.matcher.stats().sessions, 1);
    await until("the worker to dial again", () => wss.clients.size > 0);
    assert.equal(wss.clients.size, 1, "it dialled again");
  } finally {
    worker.kill();
    await worker.exited;
    await endpoint.close();
    for (const socket of wss.clients) socket.terminate();
    wss.close();
    await new Promise((done) => server.close(done));
  }
});
