// Sign-in to the MCP endpoint of a real `skein serve`: exactly one bearer of this server
// (401 with the RFC 6750 challenge otherwise), the Origin checked exactly against
// mcp.allowed_origins before the bearer (an absent Origin admitted), the connection bound
// (mcp.max_connections), GET/DELETE refused (stateless), and the endpoint absent unless
// enabled.

import assert from "node:assert/strict";
import { Agent } from "node:http";
import { before, describe, test } from "node:test";
import { until } from "../../support/until.ts";
import {
  call as api,
  type ServerProcess,
  serveForSuite,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";
import { call, rpc } from "./support.ts";

const ORIGIN = "https://console.example.com";

describe("MCP endpoint sign-in", () => {
  const s = serveForSuite(
    `[namespaces]\ndefault = "default"\n[mcp]\nenabled = true\nallowed_origins = ["${ORIGIN}"]`,
  );
  let token: string;
  let mcp: string;
  let server: ServerProcess;
  before(async () => {
    server = s.server;
    token = await tokenFor(s.dir.path, { namespaces: ["default"] });
    mcp = `${server.url}/mcp`;
  });

  const bearer = (t: string): [string, string] => ["authorization", `Bearer ${t}`];
  const ping = call("ping");

  test("one good bearer: answered", async () => {
    const r = await rpc(mcp, ping, { headers: [bearer(token)] });
    assert.equal(r.status, 200, JSON.stringify([r.headers, r.body]));
    assert.deepEqual(r.body, { jsonrpc: "2.0", id: 1, result: {} });
  });

  test("params that do not fit the method are -32602 invalid params, never -32603", async () => {
    const cases: [string, unknown, RegExp][] = [
      ["tools/call", { name: "workflow_list", arguments: "x" }, /arguments/],
      ["tools/call", { name: "workflow_list", arguments: [1, 2] }, /arguments/],
      ["tools/call", { name: 5 }, /name/],
      ["tools/list", { cursor: 5 }, /cursor/],
      ["resources/read", { uri: 7 }, /uri/],
      ["initialize", { protocolVersion: 1 }, /protocolVersion/],
    ];
    for (const [method, params, names] of cases) {
      const r = await rpc(
        mcp,
        { ...call(method, params as object, 9) },
        { headers: [bearer(token)] },
      );
      assert.equal(r.status, 200, `${method}: ${r.status} ${JSON.stringify(r.body)}`);
      assert.equal(r.body.id, 9);
      assert.equal(
        r.body.error?.code,
        -32602,
        `${method} ${JSON.stringify(params)}: ${JSON.stringify(r.body)}`,
      );
      assert.match(r.body.error.message, names);
      assert.doesNotMatch(r.body.error.message, /"x"/, "the message does not quote the value");
    }
    // Arguments that fit the schema but not the tool are the server's refusal, a tool error.
    const refused = await rpc(
      mcp,
      call("tools/call", { name: "workflow_describe", arguments: { workflow_id: 1 } }, 9),
      { headers: [bearer(token)] },
    );
    assert.equal(refused.body.result?.isError, true, JSON.stringify(refused.body));
  });

  const refused: [label: string, headers: () => [string, string][], challenge: string][] = [
    ["no bearer", () => [], "Bearer"],
    ["two bearers, both good", () => [bearer(token), bearer(token)], "Bearer"],
    ["another scheme", () => [["authorization", `Basic ${token}`]], "Bearer"],
    ["a token of no server of ours", () => [bearer("e30.e30.e30")], 'Bearer error="invalid_token"'],
  ];
  for (const [label, headers, challenge] of refused) {
    test(`${label}: 401 unauthenticated with WWW-Authenticate: ${challenge}`, async () => {
      const r = await rpc(mcp, ping, { headers: headers() });
      assert.equal(r.status, 401);
      assert.equal(r.headers["www-authenticate"], challenge);
      assert.equal(r.body.error.code, "unauthenticated");
      assert.ok(!JSON.stringify(r.body).includes(token), "a refusal never quotes the bearer");
    });
  }

  test("a foreign Origin is 403 origin_not_allowed, even with a good bearer", async () => {
    for (const origin of ["https://evil.example", `${ORIGIN}:443`, "null"]) {
      const r = await rpc(mcp, ping, { headers: [bearer(token), ["origin", origin]] });
      assert.equal(r.status, 403, origin);
      assert.equal(r.body.error.code, "origin_not_allowed");
    }
    const twice = await rpc(mcp, ping, {
      headers: [bearer(token), ["origin", ORIGIN], ["origin", ORIGIN]],
    });
    assert.equal(twice.status, 403, "two Origin headers are not one origin");
    // Before the bearer: a foreign page learns nothing about the bearer it lacks.
    const anonymous = await rpc(mcp, ping, { headers: [["origin", "https://evil.example"]] });
    assert.equal(anonymous.status, 403);
  });

  test("an allowed Origin is answered with CORS headers, and its preflight too", async () => {
    const r = await rpc(mcp, ping, { headers: [bearer(token), ["origin", ORIGIN]] });
    assert.equal(r.status, 200);
    assert.equal(r.headers["access-control-allow-origin"], ORIGIN);
    const preflight = await rpc(mcp, undefined, {
      method: "OPTIONS",
      headers: [["origin", ORIGIN]],
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers["access-control-allow-origin"], ORIGIN);
    assert.match(String(preflight.headers["access-control-allow-headers"]), /authorization/);
    const unauthorized = await rpc(mcp, ping, { headers: [["origin", ORIGIN]] });
    assert.equal(unauthorized.status, 401);
    assert.equal(
      unauthorized.headers["access-control-allow-origin"],
      ORIGIN,
      "a browser can read the 401",
    );
  });

  test("GET and DELETE without a session are 405 method_not_allowed", async () => {
    for (const method of ["GET", "DELETE"]) {
      const r = await rpc(mcp, undefined, { method, headers: [bearer(token)] });
      assert.equal(r.status, 405, method);
      assert.equal(r.body.error.code, "method_not_allowed");
      assert.equal(r.headers.allow, "POST, OPTIONS");
    }
  });

  test("a body that is not JSON is refused as the API refuses it", async () => {
    const r = await api(server.url, "POST", "/mcp", { token, body: "{nope" });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, "malformed_json");
  });
});

describe("MCP endpoint connection bound", () => {
  const s = serveForSuite(
    '[namespaces]\ndefault = "default"\n[mcp]\nenabled = true\nmax_connections = 2',
  );
  let token: string;
  let mcp: string;
  before(async () => {
    token = await tokenFor(s.dir.path, { namespaces: ["default"] });
    mcp = `${s.server.url}/mcp`;
  });
  const bearer = (t: string): [string, string] => ["authorization", `Bearer ${t}`];
  const ping = call("ping");

  test("mcp.max_connections: one connection more is 503 mcp_connections_full and closed", async () => {
    const agents = [1, 2, 3].map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
    try {
      for (const agent of agents.slice(0, 2)) {
        assert.equal((await rpc(mcp, ping, { headers: [bearer(token)], agent })).status, 200);
      }
      // The two connections stay open (keep-alive) and keep their places.
      assert.equal(
        (await rpc(mcp, ping, { headers: [bearer(token)], agent: agents[0] })).status,
        200,
      );
      const third = await rpc(mcp, ping, { headers: [bearer(token)], agent: agents[2] });
      assert.equal(third.status, 503);
      assert.equal(third.body.error.code, "mcp_connections_full");
      assert.equal(third.headers.connection, "close");
      // The rest of the API is not bounded by it.
      assert.equal((await api(s.server.url, "GET", "/namespaces", { token })).status, 200);
      agents[0]!.destroy();
      // The server sees the first connection close a moment after the client closes it.
      await until("a place freed by the closed connection", async () => {
        const r = await rpc(mcp, ping, { headers: [bearer(token)], agent: agents[2] });
        return r.status === 200;
      });
    } finally {
      for (const agent of agents) agent.destroy();
    }
  });
});

describe("MCP endpoint off (the default)", () => {
  const s = serveForSuite('[namespaces]\ndefault = "default"');

  test("a path the API already has stops start-up", async () => {
    const clash = await tempDir();
    try {
      const config = await writeConfig(clash.path, '[mcp]\nenabled = true\npath = "/health"');
      await assert.rejects(
        startServe(config),
        /mcp\.path \/health is already a route of the HTTP API/,
      );
    } finally {
      await clash.remove();
    }
  });

  test("/mcp is an unknown route", async () => {
    const token = await tokenFor(s.dir.path, { namespaces: "*" });
    const r = await rpc(`${s.server.url}/mcp`, call("ping"), {
      headers: [["authorization", `Bearer ${token}`]],
    });
    assert.equal(r.status, 404);
    assert.equal(r.body.error.code, "route_not_found");
  });
});
