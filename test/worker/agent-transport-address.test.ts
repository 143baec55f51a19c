// An agent worker finds the agent transport where the server's gRPC welcome says it is: on
// the host of its --endpoint, at the announced port, with its bearer; a welcome that
// announces no transport (port 0) leaves it on gRPC alone. A real `skein worker agent`
// process, a real worker endpoint and a real WebSocket server standing in for the HTTP
// listener's `/agents/connect`.

import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { before, describe, test } from "node:test";
import { WebSocketServer } from "ws";
import { READY_WAIT_MS } from "../../src/worker/agent-link.ts";
import { until } from "../support/until.ts";
import {
  IDLE_AGENTS,
  offer,
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

/**
 * A WebSocket server recording each upgrade request it accepts (and when); `handshakeMs`
 * delays each handshake, `null` never completes one.
 */
async function transport(handshakeMs: number | null = 0) {
  const upgrades: IncomingMessage[] = [];
  let openedAt = 0;
  const server = createServer();
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const wss = new WebSocketServer({
    server,
    verifyClient: (_info, accept) => {
      if (handshakeMs !== null) setTimeout(() => accept(true), handshakeMs);
    },
  });
  wss.on("connection", (_socket, request) => {
    openedAt = Date.now();
    upgrades.push(request);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    upgrades,
    openedAt: () => openedAt,
    port: (server.address() as AddressInfo).port,
    close: async () => {
      // Handshakes left pending would hold the server open: end every socket.
      for (const socket of sockets) socket.destroy();
      wss.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("the agent transport's address comes from the welcome", () => {
  test("announced: the worker connects at the endpoint's host and that port", async () => {
    const ws = await transport();
    const { endpoint, address } = await startEndpoint({ agentPort: ws.port });
    const worker = spawnWorker(["agent", doc, "--endpoint", address, "--token-file", token]);
    try {
      await sessions(endpoint, 1);
      await until("the worker to dial the transport", () => ws.upgrades.length > 0);
      assert.equal(ws.upgrades.length, 1, worker.stderr());
      const request = ws.upgrades[0]!;
      assert.equal(request.url, "/agents/connect");
      assert.equal(request.headers.authorization, "Bearer worker-all");
    } finally {
      worker.kill();
      await worker.exited;
      await endpoint.close();
      await ws.close();
    }
  });

  test("not announced (port 0): the worker serves over gRPC alone", async () => {
    const ws = await transport();
    const { endpoint, address } = await startEndpoint({ agentPort: 0 });
    const worker = spawnWorker(["agent", doc, "--endpoint", address, "--token-file", token]);
    try {
      await sessions(endpoint, 1);
      // Time passes on purpose: a worker that dialled anyway would do so in this window (load
      // can only make this negative check weaker, never fail a correct worker).
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(ws.upgrades.length, 0);
    } finally {
      worker.kill();
      await worker.exited;
      await endpoint.close();
      await ws.close();
    }
  });

  test("the first task waits for the link to open, so its attempt is announced from the start", async () => {
    const ws = await transport(400);
    const { endpoint, recorder, address } = await startEndpoint({ agentPort: ws.port });
    const worker = spawnWorker(["agent", doc, "--endpoint", address, "--token-file", token]);
    try {
      await sessions(endpoint, 1);
      // The model address refuses connections: the attempt fails as soon as it runs.
      endpoint.matcher.offer(offer("assistant", "hi"));
      await recorder.until(() => recorder.results.length === 1, "the attempt's result");
      const resultAt = Date.now();
      assert.ok(ws.openedAt() > 0, "the link opened");
      assert.ok(resultAt >= ws.openedAt(), "the attempt ran only once the link was open");
    } finally {
      worker.kill();
      await worker.exited;
      await endpoint.close();
      await ws.close();
    }
  });

  test("a link that never opens holds tasks for a bounded wait only", async () => {
    const ws = await transport(null);
    const { endpoint, recorder, address } = await startEndpoint({ agentPort: ws.port });
    const worker = spawnWorker(["agent", doc, "--endpoint", address, "--token-file", token]);
    try {
      await sessions(endpoint, 1);
      const offeredAt = Date.now();
      endpoint.matcher.offer(offer("assistant", "hi"));
      await recorder.until(() => recorder.results.length === 1, "the attempt's result");
      assert.equal(ws.upgrades.length, 0);
      assert.ok(Date.now() - offeredAt < READY_WAIT_MS + 3_000, "it ran without the link");
    } finally {
      worker.kill();
      await worker.exited;
      await endpoint.close();
      await ws.close();
    }
  });
});
