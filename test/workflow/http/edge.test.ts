// The HTTP listener's edge, over raw sockets against the real
// `skein serve`: every refusal the server gives, including those of Node's HTTP parser and
// of Fastify's router, has the body {"error":{"code","message"}}; connections that send
// nothing or stall inside their headers are closed; past http.max_connections new
// connections are closed at once, and /health answers again once others close.

import assert from "node:assert/strict";
import type { Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { until } from "../../support/until.ts";
import { open, parseResponse, rawRequest, readToClose } from "../support/raw-http.ts";
import {
  adminToken,
  call,
  type ServerProcess,
  startServe,
  tempDir,
  writeConfig,
} from "../support/server.ts";

const CRLF = "\r\n";
const req = (lines: string[]) => `${lines.join(CRLF)}${CRLF}${CRLF}`;

function assertErrorBody(
  r: { status: number | undefined; body: unknown },
  status: number,
  code: string,
) {
  assert.equal(r.status, status, JSON.stringify(r));
  const body = r.body as { error?: { code?: unknown; message?: unknown } };
  assert.deepEqual(Object.keys(body), ["error"], JSON.stringify(r));
  assert.equal(body.error?.code, code, JSON.stringify(r));
  assert.equal(typeof body.error?.message, "string");
}

describe("HTTP edge: every refusal has the error body (raw requests)", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess;
  let admin: string;

  before(async () => {
    dir = await tempDir();
    server = await startServe(
      await writeConfig(
        dir.path,
        "[deployments]\nenabled = true\n[http]\nheaders_timeout_ms = 300",
      ),
    );
    admin = await adminToken(dir.path);
  });
  after(async () => {
    await server?.stop();
    await dir?.remove();
  });

  const auth = () => `authorization: Bearer ${admin}`;
  const get = (path: string, ...headers: string[]) =>
    rawRequest(
      server.url,
      req([`GET ${path} HTTP/1.1`, "host: x", "connection: close", ...headers]),
    );

  test("a bad percent-escape in the path (%ZZ): 400 malformed_url", async () => {
    assertErrorBody(await get("/worker-deployments/%ZZ", auth()), 400, "malformed_url");
  });

  test("a path segment longer than any name: 414 uri_too_long", async () => {
    assertErrorBody(
      await get(`/worker-deployments/${"a".repeat(5000)}`, auth()),
      414,
      "uri_too_long",
    );
  });

  test("a deployment name of 255 bytes, percent-encoded, is routed (not 414)", async () => {
    const name = encodeURIComponent("é".repeat(127));
    assertErrorBody(await get(`/worker-deployments/${name}`, auth()), 404, "deployment_not_found");
  });

  test("headers larger than Node's limit: 431 headers_too_large", async () => {
    assertErrorBody(
      await get("/health", `x-big: ${"b".repeat(64 * 1024)}`),
      431,
      "headers_too_large",
    );
  });

  test("a request line that is not HTTP: 400 bad_request", async () => {
    assertErrorBody(await rawRequest(server.url, "HELLO THERE\r\n\r\n"), 400, "bad_request");
  });

  test("a header with a control character: 400 bad_request", async () => {
    assertErrorBody(await get("/health", "x-bad: a\u0001b"), 400, "bad_request");
  });

  test("an Expect the server does not meet: 417 expectation_failed", async () => {
    assertErrorBody(await get("/health", "expect: teapot"), 417, "expectation_failed");
  });

  test("an unsupported content type: 415 with the error body", async () => {
    const r = await rawRequest(
      server.url,
      `POST /namespaces HTTP/1.1${CRLF}host: x${CRLF}connection: close${CRLF}${auth()}${CRLF}content-type: text/plain${CRLF}content-length: 1${CRLF}${CRLF}x`,
    );
    assertErrorBody(r, 415, "unsupported_media_type");
  });

  test("an unknown route: 404 route_not_found", async () => {
    assertErrorBody(await get("/nowhere", auth()), 404, "route_not_found");
  });

  const upgrade = (path: string, ...headers: string[]) =>
    get(path, "upgrade: websocket", "connection: upgrade", ...headers);
  const refusedUpgrades: [
    label: string,
    answer: () => ReturnType<typeof get>,
    status: number,
    code: string,
  ][] = [
    [
      "to a path that is not the agent transport",
      () => upgrade("/elsewhere", auth()),
      404,
      "route_not_found",
    ],
    ["without a bearer", () => upgrade("/agents/connect"), 401, "unauthenticated"],
    [
      "with a bearer that is not a token",
      () => upgrade("/agents/connect", "authorization: Bearer x.y.z"),
      401,
      "unauthenticated",
    ],
    [
      "with a bad WebSocket handshake",
      () =>
        upgrade("/agents/connect", auth(), "sec-websocket-version: 13", "sec-websocket-key: short"),
      400,
      "bad_request",
    ],
  ];
  for (const [label, answer, status, code] of refusedUpgrades) {
    test(`a WebSocket upgrade ${label}: ${status} ${code}`, async () => {
      assertErrorBody(await answer(), status, code);
    });
  }

  test("a connection that sends nothing is closed (408 request_timeout)", async () => {
    const socket = await open(server.url);
    const r = parseResponse(await readToClose(socket));
    assertErrorBody(r, 408, "request_timeout");
  });

  test("a connection that stops inside its headers is closed (408 request_timeout)", async () => {
    const socket = await open(server.url);
    const closed = readToClose(socket);
    socket.write(`GET /health HTTP/1.1${CRLF}host: x${CRLF}`);
    assertErrorBody(parseResponse(await closed), 408, "request_timeout");
  });

  test("a request arriving while the server stops: 503 shutting_down", async () => {
    // A request in flight (its body half sent) holds the stop open; a request pipelined
    // behind it arrives after the stop began.
    const socket = await open(server.url);
    const closed = readToClose(socket);
    const body = JSON.stringify({ name: "late" });
    // The server's 100 Continue says it has parsed the headers: the request is in flight.
    let received = "";
    const inFlight = new Promise<void>((done) =>
      socket.on("data", (chunk: string) => {
        received += chunk;
        if (received.includes(`100 Continue${CRLF}`)) done();
      }),
    );
    socket.write(
      `POST /namespaces HTTP/1.1${CRLF}host: x${CRLF}${auth()}${CRLF}content-type: application/json${CRLF}expect: 100-continue${CRLF}content-length: ${body.length}${CRLF}${CRLF}${body.slice(0, 3)}`,
    );
    await inFlight;
    const stopped = server.stop();
    // The listener stops accepting once the stop begins.
    await until("the listener to refuse connections", () =>
      open(server.url).then(
        (s) => {
          s.destroy();
          return false;
        },
        () => true,
      ),
    );
    socket.write(`${body.slice(3)}GET /health HTTP/1.1${CRLF}host: x${CRLF}${CRLF}`);
    const text = (await closed).replace(`HTTP/1.1 100 Continue${CRLF}${CRLF}`, "");
    const second = text.indexOf("HTTP/1.1", 1);
    assert.ok(second > 0, text);
    assert.equal(parseResponse(text.slice(0, second)).status, 200, text);
    assertErrorBody(parseResponse(text.slice(second)), 503, "shutting_down");
    assert.equal((await stopped).code, 0);
  });
});

describe("HTTP edge: the connection cap (raw sockets)", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess;
  const held: Socket[] = [];

  before(async () => {
    dir = await tempDir();
    server = await startServe(
      await writeConfig(dir.path, "[http]\nmax_connections = 8\nheaders_timeout_ms = 60000"),
    );
  });
  after(async () => {
    for (const s of held) s.destroy();
    await server?.stop();
    await dir?.remove();
  });

  const health = () =>
    rawRequest(server.url, req(["GET /health HTTP/1.1", "host: x", "connection: close"]));

  test("past max_connections a new connection is closed unanswered; /health answers once others close", async () => {
    assert.equal((await health()).status, 200);
    for (let i = 0; i < 8; i++) held.push(await open(server.url));
    // Connections are accepted in order: the ninth is over the cap.
    const over = await health();
    assert.equal(over.status, undefined, `answered past the cap: ${over.text}`);
    for (const s of held.splice(0)) s.destroy();
    const r = await until("an answer once the held connections are gone", async () => {
      const answer = await health();
      return answer.status === undefined ? undefined : answer;
    });
    assert.deepEqual([r.status, r.body], [200, { status: "ok" }]);
    const viaFetch = await call(server.url, "GET", "/health");
    assert.equal(viaFetch.status, 200);
  });
});
