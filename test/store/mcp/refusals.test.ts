// Protocol refusals of the store's HTTP MCP endpoint (#30 item 7), against real idp, store
// and mcp-http processes: params that do not fit a method's schema are JSON-RPC -32602
// (invalid params), never -32603 (internal error); a body over the bound sent all at once is
// read to its end and answered 413, so the client reads the answer instead of a reset.

import assert from "node:assert/strict";
import { connect } from "node:net";
import { test } from "node:test";
import { MCP_REQUEST_BODY_MAX_BYTES } from "../../../src/store/mcp/edge.ts";
import { agent, DATABASE, mcpWorld, post } from "./fixture.ts";

const world = await mcpWorld();
const { url } = await world.mcp({ listen: "127.0.0.1:0", allowed_origins: [] });
const writer = await agent(world.idp, "mcp-refusals", [["admin", `db/${DATABASE}`]]);
const auth = { authorization: `Bearer ${writer.pass}` };

type RpcAnswer = {
  id: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
};

async function rpc(method: string, params: unknown): Promise<RpcAnswer> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method, params });
  const response = await post(url, auth, body);
  assert.equal(response.status, 200, `${method}: ${response.status}`);
  return (await response.json()) as RpcAnswer;
}

test("params that do not fit the method are -32602 invalid params", async () => {
  const cases: [string, unknown, RegExp][] = [
    ["tools/call", { name: "document_get", arguments: "x" }, /arguments/],
    ["tools/call", { name: "document_get", arguments: [1, 2] }, /arguments/],
    ["tools/call", { name: 5 }, /name/],
    ["tools/call", {}, /name/],
    ["tools/list", { cursor: 5 }, /cursor/],
    ["initialize", { protocolVersion: 1 }, /protocolVersion/],
  ];
  for (const [method, params, names] of cases) {
    const answer = await rpc(method, params);
    assert.equal(answer.id, 7);
    assert.equal(
      answer.error?.code,
      -32602,
      `${method} ${JSON.stringify(params)}: ${JSON.stringify(answer)}`,
    );
    assert.match(answer.error.message, names);
    assert.doesNotMatch(answer.error.message, /"x"/, "the message does not quote the value");
  }
  // A tool that does not exist is invalid params too; arguments that fit the schema but not
  // the verb are the store's refusal, a tool error.
  assert.equal(
    (await rpc("tools/call", { name: "no_such_tool", arguments: {} })).error?.code,
    -32602,
  );
  const verb = await rpc("tools/call", { name: "document_get", arguments: { key: 1 } });
  assert.equal(verb.result?.isError, true, JSON.stringify(verb));
  assert.match(JSON.stringify(verb.result), /invalid_request/);
});

/** Sends a request head and an over-bound body in one write; everything the server sends. */
function sendAtOnce(bodyBytes: number): Promise<string> {
  const head =
    `POST ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${writer.pass}\r\n` +
    "content-type: application/json\r\naccept: application/json, text/event-stream\r\n" +
    `content-length: ${bodyBytes}\r\n\r\n`;
  const payload = Buffer.concat([Buffer.from(head), Buffer.alloc(bodyBytes, 0x20)]);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(payload));
    let got = "";
    socket.on("data", (d) => {
      got += String(d);
    });
    // A reset is what this test is about: it ends the exchange with what was read so far.
    socket.on("error", () => undefined);
    socket.once("close", () => resolve(got));
  });
}

test("an 8 MiB body sent at once is read and answered 413, every time", async () => {
  assert.ok(8 * 1024 * 1024 > MCP_REQUEST_BODY_MAX_BYTES);
  for (let i = 0; i < 6; i++) {
    const answer = await sendAtOnce(8 * 1024 * 1024);
    assert.match(
      answer,
      /^HTTP\/1\.1 413 /,
      `attempt ${i}: ${JSON.stringify(answer.slice(0, 80))}`,
    );
    assert.match(answer, /"code":"body_too_large"/);
    assert.match(answer, /connection: close/i);
  }
});
