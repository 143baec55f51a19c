// The agent transport's bounds, counted: the hub on a real HTTP server with real WebSockets,
// bound to a real gRPC matcher whose attempts a real `skein worker module` holds, and tokens
// signed and verified with a real key. Announcements nobody holds are kept nowhere; a socket
// owns at most its cap and frees everything on close; a socket that answers no ping is closed;
// upgrades past the socket cap are refused with 503. Sizes are read from `stats()`, never
// inferred from memory or timing.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import WebSocket from "ws";
import { silentLogger } from "../../../src/common/log.ts";
import { matcherAuthority } from "../../../src/workflow/agents/dispatch.ts";
import { AgentHub, type AgentLimits } from "../../../src/workflow/agents/hub.ts";
import { ensureSigningKey } from "../../../src/workflow/auth/keys.ts";
import { createVerifier, issueToken } from "../../../src/workflow/auth/tokens.ts";
import type { TaskOffer } from "../../../src/workflow/engine/dispatcher.ts";
import { openStore } from "../../../src/workflow/persistence/open.ts";
import type { WorkflowStore } from "../../../src/workflow/persistence/store.ts";
import type { WorkerEndpoint } from "../../../src/workflow/rpc/server.ts";
import { until } from "../../support/until.ts";
import {
  moduleWorker,
  offer,
  sessions,
  startEndpoint,
  tempDir,
  type WorkerProcess,
} from "../../support/worker-endpoint.ts";

let dir: string;
let store: WorkflowStore;
let endpoint: WorkerEndpoint;
let worker: WorkerProcess;
let token: string;
let verify: ReturnType<typeof createVerifier>;
const held: TaskOffer[] = [];

before(async () => {
  dir = await tempDir();
  store = await openStore({ kind: "sqlite", path: join(dir, "skein.db") });
  const { key } = await ensureSigningKey(dir);
  verify = createVerifier(key.publicKey);
  token = await issueToken(key.privateKey, {
    subject: "agent",
    namespaces: "*",
    worker: true,
    ttlSeconds: 600,
  });
  let address: string;
  ({ endpoint, address } = await startEndpoint());
  worker = await moduleWorker(dir, {
    endpoint: address,
    token: "worker-all",
    actions: ["hold"],
    args: ["--concurrency", "4"],
  });
  await sessions(endpoint, 1);
  for (let i = 0; i < 3; i++) {
    const task = offer("hold", { ms: 600_000 });
    endpoint.matcher.offer(task);
    held.push(task);
  }
  assert.equal(endpoint.matcher.stats().holding, 3);
});

after(async () => {
  worker?.kill();
  await endpoint?.close();
  await store?.close();
});

interface Harness {
  readonly hub: AgentHub;
  readonly url: string;
  close(): Promise<void>;
}

async function harness(limits: Partial<AgentLimits> = {}): Promise<Harness> {
  const hub = new AgentHub({
    enabled: true,
    verify,
    logger: silentLogger(),
    transcripts: store.transcripts,
    limits,
  });
  hub.authorize(
    matcherAuthority(
      endpoint.matcher,
      (ref) => held.find((t) => t.ref.run_id === ref.run_id)?.workflowId,
    ),
  );
  const server: Server = createServer();
  server.on("upgrade", (request, socket, head) => hub.handleUpgrade(request, socket, head));
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    hub,
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/agents/connect`,
    close: async () => {
      hub.close();
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}

function connect(url: string, options: { autoPong?: boolean } = {}): Promise<WebSocket> {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, ...options });
  return new Promise((done, fail) => {
    ws.once("open", () => done(ws));
    ws.once("error", fail);
  });
}

const closed = (ws: WebSocket) =>
  new Promise<{ code: number; reason: string }>((done) =>
    ws.once("close", (code, reason) => done({ code, reason: reason.toString() })),
  );

function live(task: TaskOffer, session = endpoint.matcher.workers()[0]!.sessionId) {
  return JSON.stringify({
    type: "live",
    ref: task.ref,
    namespace: task.namespace,
    workflow_id: task.workflowId,
    session_id: session,
    capabilities: ["Cancel"],
  });
}

describe("what a socket registers is bounded and freed on close", () => {
  test("20,000 announcements of attempts nobody holds are kept nowhere", async () => {
    const h = await harness();
    try {
      const ws = await connect(h.url);
      for (let i = 0; i < 20_000; i++) {
        const task = offer("hold", {});
        // Half for attempts that exist nowhere, half naming a held attempt with a wrong session.
        ws.send(i % 2 === 0 ? live(task) : live(held[0]!, randomUUID()));
      }
      ws.send(live(held[0]!));
      await until("the real announcement", () => h.hub.stats().live === 1);
      assert.deepEqual(h.hub.stats(), { sockets: 1, live: 1, pending: 0 });
      ws.close();
      await until("the close", () => h.hub.stats().sockets === 0);
      assert.deepEqual(h.hub.stats(), { sockets: 0, live: 0, pending: 0 });
    } finally {
      await h.close();
    }
  });

  test("a socket owning more than its cap is closed, and all it owned is freed", async () => {
    const h = await harness({ maxLivePerSocket: 2 });
    try {
      const ws = await connect(h.url);
      const end = closed(ws);
      ws.send(live(held[0]!));
      ws.send(live(held[1]!));
      // Announcing one it owns again is no new attempt.
      ws.send(live(held[1]!));
      await until("two owned", () => h.hub.stats().live === 2);
      ws.send(live(held[2]!));
      assert.deepEqual(await end, {
        code: 1008,
        reason: "too_many_live_attempts: at most 2 per socket",
      });
      await until("the close", () => h.hub.stats().sockets === 0);
      assert.deepEqual(h.hub.stats(), { sockets: 0, live: 0, pending: 0 });
    } finally {
      await h.close();
    }
  });
});

describe("silent sockets and the socket cap", () => {
  test("a socket that answers no ping is closed; one that answers stays", async () => {
    // The hub closes a socket whose pong it has not read by the next tick; at 1 s a loaded
    // machine still reads the answering socket's pong in time (at 100 ms a stall did not).
    const h = await harness({ pingIntervalMs: 1000 });
    try {
      const silent = await connect(h.url, { autoPong: false });
      const answering = await connect(h.url);
      await closed(silent);
      await until("the silent socket dropped", () => h.hub.stats().sockets === 1);
      assert.equal(answering.readyState, WebSocket.OPEN);
      answering.close();
    } finally {
      await h.close();
    }
  });

  test("an upgrade past the socket cap is refused with 503", async () => {
    const h = await harness({ maxSockets: 2 });
    try {
      const open = [await connect(h.url), await connect(h.url)];
      const refused = new WebSocket(h.url, { headers: { authorization: `Bearer ${token}` } });
      refused.on("error", () => {});
      const status = await new Promise<number>((done) => {
        refused.once("unexpected-response", (_request, response) => done(response.statusCode!));
        refused.once("open", () => done(101));
      });
      assert.equal(status, 503);
      refused.terminate();
      const end = closed(open[0]!);
      open[0]!.close();
      await end;
      await until("a free place", () => h.hub.stats().sockets === 1);
      const again = await connect(h.url);
      assert.equal(h.hub.stats().sockets, 2);
      for (const ws of [again, open[1]!]) ws.close();
    } finally {
      await h.close();
    }
  });
});
