// `skein-store mcp-http` as a real process in front of a real `skein-store serve` with `idp`
// and the real dev `skein-idp`: the SDK's own client lists and calls the tools with an
// agent's pass; sign-in (401 challenges, two bearers, a refused pass), Origin, a denied act,
// the header and body deadlines and max_connections, all over real sockets.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { StoreClient } from "../../../src/store/client/client.ts";
import { until } from "../../support/until.ts";
import { addClient, grant } from "../idp/support.ts";
import { agent, DATABASE, mcpWorld, post, sdkClient, signedPass } from "./fixture.ts";

const run = promisify(execFile);
const world = await mcpWorld();
const LOOPBACK = "127.0.0.1:0";
const ORIGIN = "https://app.example";
const main = await world.mcp({ listen: LOOPBACK, allowed_origins: [ORIGIN] });
const writer = await agent(world.idp, "mcp-writer", [["admin", `db/${DATABASE}`]]);
// Read on the whole database: a collection grant covers only placed collections.
const reader = await agent(world.idp, "mcp-reader", [["read", `db/${DATABASE}`]]);
// Collections are made over the socket: creating one is no agent tool.
const admin = await StoreClient.connect(world.socketPath, { pass: writer.pass });
await admin.call("collections.create", { collection: "notes" });
await admin.close();

type ToolText = { content: { type: string; text: string }[]; isError?: boolean };

test("the SDK client lists the tools the store serves, each with its schemas", async () => {
  const client = await sdkClient(main.url, writer.pass);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const name of ["collections_list", "document_get", "document_append_prune"]) {
    assert.ok(names.includes(name), name);
  }
  // Verbs this store does not serve are no tools.
  assert.ok(!names.some((n) => n.startsWith("query") || n.startsWith("search")));
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, "object");
    assert.equal(tool.outputSchema?.type, "object");
    assert.ok((tool.description ?? "").length > 10);
  }
  await client.close();
});

test("tools are called with the caller's pass: put, get, append_prune, history", async () => {
  const client = await sdkClient(main.url, writer.pass);
  const put = await client.callTool({
    name: "document_put",
    arguments: { collection: "notes", key: "a", value: { n: 1 } },
  });
  assert.equal(put.isError, undefined, JSON.stringify(put));
  const receipt = put.structuredContent as { version: number; author: string };
  // The store has idp: a commit is signed by the pass's subject, not the MCP server's name.
  assert.equal(receipt.author, "mcp-writer");
  const got = await client.callTool({
    name: "document_get",
    arguments: { collection: "notes", key: "a" },
  });
  assert.deepEqual(got.structuredContent, {
    found: true,
    value: { n: 1 },
    version: receipt.version,
  });
  const memory = await client.callTool({
    name: "document_append_prune",
    arguments: { collection: "notes", key: "log", records: [1, 2, 3], keep: 2 },
  });
  const appended = memory.structuredContent as { appended: number; length: number };
  assert.equal(appended.appended, 3);
  assert.equal(appended.length, 2);
  const history = await client.callTool({
    name: "history_list",
    arguments: { collection: "notes" },
  });
  assert.ok((history.structuredContent as { rows: unknown[] }).rows.length >= 2);
  await client.close();
});

test("a value with own __proto__ keys is stored and answered as sent, as JSON text", async () => {
  const auth = { authorization: `Bearer ${writer.pass}` };
  const value = '{"__proto__": {"polluted": 1}, "a": [{"__proto__": null}]}';
  const call = async (id: number, name: string, args: string) => {
    const body = `{"jsonrpc": "2.0", "id": ${id}, "method": "tools/call", "params": {"name": "${name}", "arguments": ${args}}}`;
    const response = await post(main.url, auth, body);
    assert.equal(response.status, 200);
    const text = await response.text();
    // The answer is JSON (or one SSE event of it); JSON.parse keeps __proto__ an own key.
    const json = text.startsWith("{") ? text : /^data: (.*)$/m.exec(text)![1]!;
    return JSON.parse(json) as { result: { structuredContent: Record<string, unknown> } };
  };
  const put = await call(
    1,
    "document_put",
    `{"collection": "notes", "key": "proto", "value": ${value}}`,
  );
  assert.equal(typeof put.result.structuredContent.version, "number", JSON.stringify(put));
  const got = await call(2, "document_get", '{"collection": "notes", "key": "proto"}');
  assert.equal(
    JSON.stringify(got.result.structuredContent.value),
    JSON.stringify(JSON.parse(value)),
  );
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test("every tool's answer fits its output schema (the SDK client checks it)", async () => {
  const client = await sdkClient(main.url, writer.pass);
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    assert.equal(result.isError, undefined, `${name}: ${JSON.stringify(result)}`);
    return result.structuredContent as Record<string, unknown>;
  };
  const base = (await call("document_put", { collection: "notes", key: "s1", value: 1 }))
    .version as number;
  await call("branches_create", { collection: "notes", branch: "try" });
  await call("document_put", {
    collection: "notes",
    branch: "try",
    records: [
      { key: "s2", value: [1, 2] },
      { key: "s3", value: null },
    ],
  });
  assert.ok(((await call("branches_list", { collection: "notes" })).rows as unknown[]).length >= 2);
  const listed = await call("document_list", { collection: "notes", branch: "try", prefix: "s" });
  assert.deepEqual(
    (listed.rows as { key: string }[]).map((r) => r.key),
    ["s1", "s2", "s3"],
  );
  const changes = await call("changes_list", {
    collection: "notes",
    branch: "try",
    from_branch: "main",
    from: base,
  });
  assert.equal((changes.changes as unknown[]).length, 2);
  await call("document_delete", { collection: "notes", branch: "try", keys: ["s2", "s3"] });
  await call("branches_delete", { collection: "notes", branch: "try" });
  await call("collections_list", {});
  await client.close();
});

test("after a store restart the same pass's next call connects again", async () => {
  const client = await sdkClient(main.url, writer.pass);
  const before = await client.callTool({
    name: "document_get",
    arguments: { collection: "notes", key: "a" },
  });
  assert.equal(before.isError, undefined);
  await world.restartStore();
  const after = await client.callTool({
    name: "document_get",
    arguments: { collection: "notes", key: "a" },
  });
  assert.equal(after.isError, undefined, JSON.stringify(after));
  assert.equal((after.structuredContent as { found: boolean }).found, true);
  await client.close();
});

test("a denied act is a tool error carrying the store's code", async () => {
  const client = await sdkClient(main.url, reader.pass);
  const denied = (await client.callTool({
    name: "document_put",
    arguments: { collection: "notes", key: "b", value: 2 },
  })) as ToolText;
  assert.equal(denied.isError, true);
  assert.equal(JSON.parse(denied.content[0]!.text).error.code, "permission_denied");
  const read = await client.callTool({
    name: "document_get",
    arguments: { collection: "notes", key: "a" },
  });
  assert.equal((read.structuredContent as { found: boolean })?.found, true, JSON.stringify(read));
  await client.close();
});

test("the MCP Inspector's CLI lists and calls the tools with the bearer header", async () => {
  const list = await inspector(main.url, writer.pass, ["--method", "tools/list"]);
  const tools = (list as { tools: { name: string }[] }).tools.map((t) => t.name);
  assert.ok(tools.includes("document_get"), JSON.stringify(list));
  const called = await inspector(main.url, writer.pass, [
    "--method",
    "tools/call",
    "--tool-name",
    "document_get",
    "--tool-arg",
    "collection=notes",
    "key=absent",
  ]);
  const result = called as { structuredContent?: { found: boolean } };
  assert.equal(result.structuredContent?.found, false, JSON.stringify(called));
});

test("no bearer, a malformed one and two bearers are 401 with the bare challenge", async () => {
  const cases: [string, Record<string, string> | string[]][] = [
    ["none", {}],
    ["malformed", { authorization: `Bearer ${writer.pass} extra` }],
    ["another scheme", { authorization: `Basic ${writer.pass}` }],
  ];
  for (const [what, headers] of cases) {
    const response = await post(main.url, headers as Record<string, string>);
    assert.equal(response.status, 401, what);
    assert.equal(response.headers.get("www-authenticate"), "Bearer", what);
    assert.equal(
      ((await response.json()) as { error: { code: string } }).error.code,
      "bearer_required",
    );
  }
  const two = await rawRequest(main.url, [
    `authorization: Bearer ${writer.pass}`,
    `authorization: Bearer ${reader.pass}`,
  ]);
  assert.match(two, /^HTTP\/1\.1 401 /);
  assert.match(two, /\r\nwww-authenticate: Bearer\r\n/i);
});

test("a pass the store refuses is 401 invalid_token; no pass text in the answer", async () => {
  const forged = `${writer.pass.slice(0, -4)}AAAA`;
  const response = await post(main.url, { authorization: `Bearer ${forged}` });
  assert.equal(response.status, 401);
  assert.equal(response.headers.get("www-authenticate"), 'Bearer error="invalid_token"');
  assert.ok(!(await response.text()).includes(forged.slice(20, 60)));
  // Nor in mcp-http's log, for this pass or the ones it served.
  for (const pass of [forged, writer.pass, reader.pass]) {
    assert.ok(!main.process.stderr().includes(pass.slice(20, 60)));
  }
});

test("a pass that expires: its call is a pass_expired tool error, its next request a 401", async () => {
  addClient(world.idp, "mcp-short");
  grant(world.idp, "client:mcp-short", "admin", `db/${DATABASE}`);
  const now = Math.floor(Date.now() / 1000);
  const short = await signedPass(world.idp, {
    iss: world.idp.issuer,
    sub: "mcp-short",
    aud: `urn:skein:store:${DATABASE}`,
    iat: now,
    exp: now + 3,
  });
  const client = await sdkClient(main.url, short);
  const fresh = await client.callTool({ name: "collections_list", arguments: {} });
  assert.equal(fresh.isError, undefined, JSON.stringify(fresh));
  // Time passes on purpose, here and below: the pass's exp, then the clock tolerance, run out.
  await new Promise((resolve) => setTimeout(resolve, (now + 3) * 1000 - Date.now() + 500));
  const late = (await client.callTool({ name: "collections_list", arguments: {} })) as ToolText;
  assert.equal(late.isError, true);
  assert.equal(JSON.parse(late.content[0]!.text).error.code, "pass_expired");
  // The store's hello allows 5 s of clock skew (PASS_CLOCK_TOLERANCE_S): past it, the pass's
  // next request says hello again and is refused.
  await new Promise((resolve) => setTimeout(resolve, (now + 3 + 6) * 1000 - Date.now()));
  const next = await post(main.url, { authorization: `Bearer ${short}` });
  assert.equal(next.status, 401);
  assert.equal(next.headers.get("www-authenticate"), 'Bearer error="invalid_token"');
  await client.close().catch(() => undefined);
});

test("with resource_metadata_url the 401 challenge names it (RFC 9728)", async () => {
  const metadata = "https://mcp.example/.well-known/oauth-protected-resource";
  const { url } = await world.mcp({
    listen: LOOPBACK,
    allowed_origins: [],
    resource_metadata_url: metadata,
  });
  const response = await post(url, {});
  assert.equal(response.status, 401);
  assert.equal(response.headers.get("www-authenticate"), `Bearer resource_metadata="${metadata}"`);
});

test("Origin: absent and allowed are served; another is 403, even with a good pass", async () => {
  const auth = { authorization: `Bearer ${writer.pass}` };
  assert.equal((await post(main.url, auth)).status, 200);
  assert.equal((await post(main.url, { ...auth, origin: ORIGIN })).status, 200);
  for (const origin of ["https://evil.example", "https://app.example:8443", "http://app.example"]) {
    const response = await post(main.url, { ...auth, origin });
    assert.equal(response.status, 403, origin);
    assert.equal(
      ((await response.json()) as { error: { code: string } }).error.code,
      "origin_not_allowed",
    );
  }
  // An empty allowed set admits only callers without Origin.
  const { url } = await world.mcp({ listen: LOOPBACK, allowed_origins: [] });
  assert.equal((await post(url, auth)).status, 200);
  assert.equal((await post(url, { ...auth, origin: ORIGIN })).status, 403);
});

test("protocol versions 2025-06-18 and 2025-11-25 are both negotiated", async () => {
  for (const version of ["2025-06-18", "2025-11-25"]) {
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: version,
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    };
    const response = await post(
      main.url,
      { authorization: `Bearer ${writer.pass}` },
      JSON.stringify(initialize),
    );
    assert.equal(response.status, 200);
    const body = (await response.json()) as { result: { protocolVersion: string } };
    assert.equal(body.result.protocolVersion, version);
  }
});

test("POST only; a body too large is 413 and one not JSON is 400", async () => {
  const auth = { authorization: `Bearer ${writer.pass}` };
  const get = await fetch(main.url, { headers: { ...auth, accept: "text/event-stream" } });
  assert.equal(get.status, 405);
  assert.equal(get.headers.get("allow"), "POST");
  // The server reads an over-bound body to its end before it answers (refusals.test.ts).
  const large = await post(main.url, auth, `"${"x".repeat(4 * 1024 * 1024)}"`);
  assert.equal(large.status, 413);
  const notJson = await post(main.url, auth, "{");
  assert.equal(notJson.status, 400);
  assert.equal(((await notJson.json()) as { error: { code: string } }).error.code, "body_not_json");
});

test("header and body deadlines: a stalled request is answered 408 and closed", async () => {
  const { url } = await world.mcp({
    listen: LOOPBACK,
    allowed_origins: [],
    // Headers sent in one write must beat the header deadline on a loaded machine too.
    header_timeout_ms: 1500,
    body_timeout_ms: 300,
  });
  const headers = await stalled(url, `POST ${url.pathname} HTTP/1.1\r\nhost: x\r\n`);
  assert.match(headers, /^HTTP\/1\.1 408 /);
  const body = await stalled(
    url,
    `POST ${url.pathname} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${writer.pass}\r\n` +
      "content-type: application/json\r\ncontent-length: 100\r\n\r\n{",
  );
  assert.match(body, /^HTTP\/1\.1 408 /);
  assert.match(body, /"code":"body_timeout"/);
});

test("max_connections: a connection past the limit is closed unanswered", async () => {
  const { url } = await world.mcp({ listen: LOOPBACK, allowed_origins: [], max_connections: 2 });
  const held = [await open(url), await open(url)];
  const refused = await open(url);
  const answer = await send(refused, request(url, [`authorization: Bearer ${writer.pass}`]));
  assert.equal(answer, "", "closed without an answer");
  held[0]!.destroy();
  // Once the server has seen that close, the freed place admits a request (one sent before
  // then is closed unanswered, as above: the client sends it again).
  const admitted = await until("a request in the freed place", async () => {
    const answer = await post(url, { authorization: `Bearer ${writer.pass}` }).catch(() => null);
    return answer ?? undefined;
  });
  assert.equal(admitted.status, 200);
  for (const s of held) s.destroy();
});

const INSPECTOR = fileURLToPath(
  import.meta.resolve("@modelcontextprotocol/inspector/clients/launcher/build/index.js"),
);

/** Runs `mcp-inspector --cli` (offline) against `url`; its JSON output. */
async function inspector(url: URL, pass: string, args: string[]): Promise<unknown> {
  const home = await mkdtemp(join(tmpdir(), "skein-inspector-"));
  const { stdout } = await run(
    process.execPath,
    [
      INSPECTOR,
      "--cli",
      url.href,
      "--transport",
      "http",
      ...args,
      "--header",
      `Authorization: Bearer ${pass}`,
    ],
    { env: { ...process.env, HOME: home, MCP_CATALOG_PATH: join(home, "mcp.json") } },
  );
  return JSON.parse(stdout);
}

function request(url: URL, headers: string[]): string {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
  return (
    `POST ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\nconnection: close\r\n` +
    "content-type: application/json\r\naccept: application/json, text/event-stream\r\n" +
    `${headers.map((h) => `${h}\r\n`).join("")}content-length: ${body.length}\r\n\r\n${body}`
  );
}

function open(url: URL): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Writes `text` and gathers everything the server sends until it closes. */
function send(socket: Socket, text: string): Promise<string> {
  return new Promise((resolve) => {
    let got = "";
    socket.on("data", (d) => {
      got += String(d);
    });
    socket.on("error", () => undefined);
    socket.once("close", () => resolve(got));
    socket.write(text);
  });
}

async function rawRequest(url: URL, headers: string[]): Promise<string> {
  return send(await open(url), request(url, headers));
}

/** Sends a request that never completes; what the server answers before it closes. */
async function stalled(url: URL, text: string): Promise<string> {
  return send(await open(url), text);
}
