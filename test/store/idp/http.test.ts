// The store's HTTP client to its IdP, against real sockets of this test's own: a server that
// accepts and never answers (the 15 s whole-request bound), a listener whose accept queue is
// full (the 5 s connect bound), and plain servers for keep-alive, concurrency and size caps.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import { after, describe, test } from "node:test";
import {
  IDP_CONNECT_TIMEOUT_MS,
  IDP_MAX_SOCKETS,
  IDP_REQUEST_TIMEOUT_MS,
  IdpHttp,
  IdpHttpError,
} from "../../../src/store/idp/http.ts";
import { until } from "../../support/until.ts";

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: URL; server: Server; connections: () => number }> {
  const server = createServer(handler);
  let connections = 0;
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: new URL(`http://127.0.0.1:${port}/x`), server, connections: () => connections };
}

async function failure(promise: Promise<unknown>): Promise<IdpHttpError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof IdpHttpError, String(error));
    return error;
  }
  assert.fail("the request succeeded");
}

test("the bounds are the spec's: 5 s connect, 15 s whole request", () => {
  assert.equal(IDP_CONNECT_TIMEOUT_MS, 5_000);
  assert.equal(IDP_REQUEST_TIMEOUT_MS, 15_000);
});

// Each waits a spec constant out in full, so the two wait side by side.
describe("the bounds, waited out", { concurrency: true }, () => {
  test("a server that accepts and never answers fails the request at the whole-request bound", async () => {
    const { url } = await listen(() => {});
    const http = new IdpHttp();
    after(() => http.close());
    const error = await failure(http.request(url, { method: "GET" }));
    assert.equal(error.kind, "timeout");
    assert.match(error.message, /15000 ms/);
  });

  test("a connection the listener never completes fails at the connect bound", async () => {
    // A listener with a one-place accept queue in a process that never accepts: once two
    // connections wait in the queue, the kernel drops further SYNs and connect() hangs.
    const child: ChildProcess = spawn(
      process.execPath,
      [
        "-e",
        `const s=require("net").createServer();s.listen({port:0,host:"127.0.0.1",backlog:1},()=>{console.log(s.address().port);Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0);});`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    after(() => child.kill("SIGKILL"));
    const port = await new Promise<number>((resolve) =>
      child.stdout!.once("data", (d) => resolve(Number(String(d)))),
    );
    const fillers: Socket[] = [];
    after(() => {
      for (const s of fillers) s.destroy();
    });
    for (let i = 0; i < 2; i++) {
      const socket = connect(port, "127.0.0.1");
      fillers.push(socket);
      await new Promise((resolve) => socket.once("connect", resolve));
    }
    const http = new IdpHttp();
    after(() => http.close());
    const error = await failure(
      http.request(new URL(`http://127.0.0.1:${port}/x`), { method: "GET" }),
    );
    assert.equal(error.kind, "connect_timeout");
    assert.match(error.message, /5000 ms/);
  });
});

test("nothing listening is `unreachable`, and the message names no header", async () => {
  const { url, server } = await listen(() => {});
  await new Promise((resolve) => server.close(resolve));
  const http = new IdpHttp();
  after(() => http.close());
  const error = await failure(
    http.request(url, { method: "POST", headers: { authorization: "Bearer SECRET-PASS" } }),
  );
  assert.equal(error.kind, "unreachable");
  assert.doesNotMatch(error.message, /SECRET-PASS/);
});

test("connections are kept alive between requests", async () => {
  const { url, connections } = await listen((_req, res) => res.end("{}"));
  const http = new IdpHttp();
  after(() => http.close());
  for (let i = 0; i < 5; i++) {
    const answer = await http.request(url, { method: "POST", body: "{}" });
    assert.equal(answer.status, 200);
  }
  assert.equal(connections(), 1);
});

test("at most IDP_MAX_SOCKETS connections are open at once; the rest wait", async () => {
  const held: ServerResponse[] = [];
  const { url, connections } = await listen((_req, res) => held.push(res));
  const http = new IdpHttp();
  after(() => http.close());
  const all = Array.from({ length: IDP_MAX_SOCKETS + 8 }, () =>
    http.request(url, { method: "GET" }),
  );
  await until("IDP_MAX_SOCKETS requests held", () => held.length >= IDP_MAX_SOCKETS);
  // Time passes on purpose: a request past the bound would open a connection in this window
  // (load can only make this negative check weaker, never fail a correct client).
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(connections(), IDP_MAX_SOCKETS);
  assert.equal(held.length, IDP_MAX_SOCKETS);
  // Answering frees connections for the waiting requests, which then complete on them.
  const answerAll = setInterval(() => {
    for (const res of held.splice(0)) res.end("{}");
  }, 10);
  await Promise.all(all);
  clearInterval(answerAll);
  assert.equal(connections(), IDP_MAX_SOCKETS);
});

test("requests beyond the waiting bound fail at once as busy", async () => {
  const { url } = await listen(() => {});
  const http = new IdpHttp({ maxSockets: 1, maxWaiting: 1, requestMs: 2_000 });
  after(() => http.close());
  const first = http.request(url, { method: "GET" });
  const second = http.request(url, { method: "GET" });
  const error = await failure(http.request(url, { method: "GET" }));
  assert.equal(error.kind, "busy");
  await Promise.allSettled([first, second]);
});

test("an answer above the size bound is refused", async () => {
  const { url } = await listen((_req, res) => res.end(Buffer.alloc(4096)));
  const http = new IdpHttp({ maxResponseBytes: 1024 });
  after(() => http.close());
  const error = await failure(http.request(url, { method: "GET" }));
  assert.equal(error.kind, "too_large");
});
