// An agent worker finds the agent transport where the server's gRPC welcome says it is: on
// the host of its --endpoint, at the announced port, with its bearer; a welcome that
// announces no transport (port 0) leaves it on gRPC alone. A real `skein worker agent`
// process, a real worker endpoint and a real WebSocket server standing in for the HTTP
// listener's `/agents/connect`.

import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { before, describe, test } from "node:test";
import { WebSocketServer } from "ws";
import {
  sessions,
  spawnWorker,
  startEndpoint,
  tempDir,
  tokenFile,
  writeJson,
} from "../helpers/worker-endpoint.ts";

let dir: string;
let doc: string;
let token: string;

before(async () => {
  dir = await tempDir();
  token = await tokenFile(dir, "worker-all");
  doc = await writeJson(dir, "agents.json", {
    name: "agents",
    task_queue: "q",
    // Never called here: no task is offered.
    actions: { assistant: { agent: { base_url: "http://127.0.0.1:9", model: "none" } } },
  });
});

/** A WebSocket server recording each upgrade request it accepts. */
async function transport() {
  const upgrades: IncomingMessage[] = [];
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  wss.on("connection", (_socket, request) => upgrades.push(request));
  await new Promise((resolve) => wss.once("listening", resolve));
  return {
    upgrades,
    port: (wss.address() as AddressInfo).port,
    close: () => new Promise((resolve) => wss.close(resolve)),
  };
}

describe("the agent transport's address comes from the welcome", () => {
  test("announced: the worker connects at the endpoint's host and that port", async () => {
    const ws = await transport();
    const { endpoint, address } = await startEndpoint({ agentPort: ws.port });
    const worker = spawnWorker(["agent", doc, "--endpoint", address, "--token-file", token]);
    try {
      await sessions(endpoint, 1);
      for (let i = 0; i < 500 && ws.upgrades.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
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
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(ws.upgrades.length, 0);
    } finally {
      worker.kill();
      await worker.exited;
      await endpoint.close();
      await ws.close();
    }
  });
});
