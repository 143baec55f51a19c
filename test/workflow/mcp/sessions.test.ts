// MCP sessions on a real `skein serve`, with the SDK's client: an initialize opens a session
// whose GET stream carries tools/list_changed after a registration in its namespace and
// resources/updated for a subscribed run as it advances and ends; a session belongs to the
// subject that opened it (another bearer can neither use, follow nor end it); the session
// table is bounded and an idle session expires, while requests without a session stay
// stateless JSON.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import {
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { until } from "../../support/until.ts";
import { call as api, serveForSuite, tokenFor } from "../support/server.ts";
import { call, initialize, rpc, type SessionClient, sessionClient } from "./support.ts";

const GATE = {
  name: "gate",
  steps: [
    { id: "a", wait: { signal: "go" } },
    { id: "b", wait: { signal: "go" } },
  ],
};

const open: SessionClient[] = [];
after(async () => {
  for (const s of open) await s.client.close();
});

async function session(
  url: string,
  token: string,
  options: Parameters<typeof sessionClient>[2] = {},
): Promise<SessionClient> {
  const s = await sessionClient(url, token, options);
  open.push(s);
  return s;
}

async function metrics(url: string, token: string): Promise<string> {
  const r = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.status, 200);
  return r.text();
}

/** A raw request naming session `id`, with `token`. */
const inSession = (url: string, token: string, id: string, method = "POST") =>
  rpc(`${url}/mcp`, method === "POST" ? call("tools/list") : undefined, {
    method,
    headers: [
      ["authorization", `Bearer ${token}`],
      ["mcp-session-id", id],
    ],
  });

describe("MCP sessions", () => {
  const s = serveForSuite('[namespaces]\ndefault = "default"\n[mcp]\nenabled = true');
  const register = (definition: object, namespace?: string) =>
    api(s.server.url, "POST", "/workflows/definitions", {
      token: s.admin,
      body: { definition, ...(namespace === undefined ? {} : { namespace }) },
    });

  test("a session is told tools/list_changed when a definition is registered in its namespace", async () => {
    let here = 0;
    let there = 0;
    const a = await session(s.server.url, s.admin, {
      setUp: (c) => c.setNotificationHandler(ToolListChangedNotificationSchema, () => void here++),
    });
    await session(s.server.url, s.admin, {
      namespace: "other",
      setUp: (c) => c.setNotificationHandler(ToolListChangedNotificationSchema, () => void there++),
    });
    assert.match(a.sessionId, /^[0-9a-f-]{36}$/);
    assert.equal((await a.client.getServerCapabilities())?.tools?.listChanged, true);
    assert.equal((await register({ ...GATE, name: "elsewhere" }, "other")).status, 200);
    await until("list_changed in the other namespace's session", () => there === 1);
    assert.ok(!(await a.client.listTools()).tools.some((t) => t.name === "run_gate"));
    assert.equal((await register(GATE)).status, 200);
    await until("list_changed in the default namespace's session", () => here === 1);
    assert.ok((await a.client.listTools()).tools.some((t) => t.name === "run_gate"));
    assert.deepEqual([here, there], [1, 1], "each session hears of its own namespace only");
  });

  test("a subscribed run sends resources/updated as it advances and ends", async () => {
    assert.equal((await register(GATE)).status, 200);
    const updated: string[] = [];
    const c = await session(s.server.url, s.admin, {
      setUp: (client) =>
        client.setNotificationHandler(
          ResourceUpdatedNotificationSchema,
          (n) => void updated.push(n.params.uri),
        ),
    });
    const started = await api(s.server.url, "POST", "/workflows/start", {
      token: s.admin,
      body: { name: "gate", input: {} },
    });
    const uri = `skein://runs/default/${started.body.workflow_id}`;
    await c.client.subscribeResource({ uri });
    const signal = () =>
      c.client.callTool({
        name: "workflow_signal",
        arguments: { workflow_id: started.body.workflow_id, signal: "go", payload: {} },
      });
    assert.ok(!(await signal()).isError);
    await until("an update as the run advances", () => updated.length >= 1);
    assert.deepEqual(new Set(updated), new Set([uri]));
    const advanced = updated.length;
    assert.ok(!(await signal()).isError);
    await until("an update as the run ends", () => updated.length > advanced);
    const read = await c.client.readResource({ uri });
    assert.equal(JSON.parse((read.contents[0] as { text: string }).text).run.status, "Completed");
    // A run the bearer may not see cannot be followed: not found, as a read.
    const otherOnly = await tokenFor(s.dir.path, { subject: "o", namespaces: ["other"] });
    const o = await session(s.server.url, otherOnly, { namespace: "other" });
    await assert.rejects(o.client.subscribeResource({ uri }), /resource not found/);
  });

  test("tool calls are counted and timed per tool and outcome", async () => {
    const c = await session(s.server.url, s.admin);
    const unknown = "0190f4a2-0000-7000-8000-000000000000";
    assert.ok(!(await c.client.callTool({ name: "namespaces_list", arguments: {} })).isError);
    const refused = await c.client.callTool({
      name: "workflow_describe",
      arguments: { workflow_id: unknown },
    });
    assert.equal(refused.isError, true);
    await assert.rejects(c.client.callTool({ name: "no_such_tool", arguments: {} }));
    const text = await metrics(s.server.url, s.admin);
    const count = (labels: string) =>
      Number(
        new RegExp(`^skein_mcp_tool_seconds_count\\{${labels}\\} (\\d+)$`, "m").exec(text)?.[1],
      );
    assert.ok(count('tool="namespaces_list",outcome="ok"') >= 1, text);
    assert.ok(count('tool="workflow_describe",outcome="refused"') >= 1);
    assert.ok(count('tool="unknown",outcome="error"') >= 1);
    assert.match(text, /^skein_mcp_tool_seconds_sum\{tool="namespaces_list",outcome="ok"\} /m);
  });

  test("a session belongs to its subject: another bearer can neither use, follow nor end it", async () => {
    const alice = await tokenFor(s.dir.path, { subject: "alice", namespaces: ["default"] });
    const bob = await tokenFor(s.dir.path, { subject: "bob", namespaces: "*" });
    const a = await session(s.server.url, alice);
    for (const method of ["POST", "GET", "DELETE"]) {
      const r = await inSession(s.server.url, bob, a.sessionId, method);
      assert.equal(r.status, 404, method);
      assert.equal(r.body.error.code, "session_not_found", method);
    }
    assert.ok((await a.client.listTools()).tools.length > 0, "still alice's, still open");
    // The same subject with another bearer (a renewed token) is the session's owner.
    const renewed = await tokenFor(s.dir.path, { subject: "alice", namespaces: ["default"] });
    const again = await inSession(s.server.url, renewed, a.sessionId);
    assert.equal(again.status, 200);
    assert.ok(Array.isArray(again.body.result.tools));
    await a.transport.terminateSession();
    const ended = await inSession(s.server.url, alice, a.sessionId);
    assert.deepEqual([ended.status, ended.body.error.code], [404, "session_not_found"]);
  });
});

describe("MCP session bounds", () => {
  const s = serveForSuite(
    '[namespaces]\ndefault = "default"\n[mcp]\nenabled = true\nmax_sessions = 2\nsession_idle_ms = 1000',
  );
  const raw = (message: unknown, headers: [string, string][] = []) =>
    rpc(`${s.server.url}/mcp`, message, {
      headers: [["authorization", `Bearer ${s.admin}`], ...headers],
    });

  const sessionsOpen = async () => {
    const r = await metrics(s.server.url, s.admin);
    return Number(/^skein_mcp_sessions (\d+)$/m.exec(r)?.[1]);
  };

  test("mcp.max_sessions bounds the table; an idle session expires, one with its GET stream open does not", async () => {
    const first = await session(s.server.url, s.admin);
    const second = await session(s.server.url, s.admin);
    const full = await raw(initialize("2025-06-18"));
    assert.deepEqual([full.status, full.body.error.code], [503, "mcp_sessions_full"]);
    // Without a session the endpoint answers as ever: stateless JSON.
    const stateless = await raw(call("tools/list"));
    assert.equal(stateless.status, 200);
    assert.match(String(stateless.headers["content-type"]), /^application\/json/);
    assert.equal(stateless.headers["mcp-session-id"], undefined);
    await first.transport.terminateSession();
    const third = await raw(initialize("2025-06-18"));
    assert.equal(third.status, 200);
    assert.equal(third.body.result.protocolVersion, "2025-06-18");
    const id = String(third.headers["mcp-session-id"]);
    assert.match(id, /^[0-9a-f-]{36}$/);
    // No GET stream and no request: it expires after mcp.session_idle_ms. Watched through
    // the sessions gauge, since a request naming it would be a use that keeps it.
    await until("the idle session ended", async () => (await sessionsOpen()) === 1);
    const expired = await inSession(s.server.url, s.admin, id);
    assert.deepEqual([expired.status, expired.body.error.code], [404, "session_not_found"]);
    assert.ok((await second.client.listTools()).tools.length > 0, "its GET stream kept it");
    await second.client.close();
    await until(
      "the session ended once its stream closed",
      async () => (await sessionsOpen()) === 0,
    );
    const gone = await inSession(s.server.url, s.admin, second.sessionId);
    assert.equal(gone.status, 404);
  });
});
