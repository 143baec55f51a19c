// The MCP Inspector's CLI mode (`@modelcontextprotocol/inspector --cli`, run locally) against
// a real `skein serve`: a client that is not ours lists the tools, calls one, and is refused
// without a bearer.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { call, serveForSuite } from "../support/server.ts";

const INSPECTOR = fileURLToPath(
  new URL(
    "../../../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js",
    import.meta.url,
  ),
);

function inspector(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [INSPECTOR, "--cli", ...args],
      { timeout: 120_000 },
      (error, stdout, stderr) =>
        done({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }),
    );
  });
}

describe("MCP Inspector CLI against skein serve", () => {
  const s = serveForSuite('[namespaces]\ndefault = "default"\n[mcp]\nenabled = true');
  const target = () => [`${s.server.url}/mcp`, "--transport", "http"];
  const bearer = () => ["--header", `Authorization: Bearer ${s.admin}`];

  test("lists the tools, a definition's run tool among them, and calls one", async () => {
    const definition = {
      name: "hello",
      input_schema: { type: "object", properties: { who: { type: "string" } } },
      steps: [{ id: "w", wait: { signal: "go" } }],
    };
    const r = await call(s.server.url, "POST", "/workflows/definitions", {
      token: s.admin,
      body: { definition },
    });
    assert.equal(r.status, 200);
    const listed = await inspector([...target(), "--method", "tools/list", ...bearer()]);
    assert.equal(listed.code, 0, listed.stderr);
    const tools = JSON.parse(listed.stdout).tools as { name: string; inputSchema: unknown }[];
    assert.ok(tools.some((t) => t.name === "workflow_start"));
    assert.deepEqual(
      tools.find((t) => t.name === "run_hello")?.inputSchema,
      definition.input_schema,
    );
    const called = await inspector([
      ...target(),
      "--method",
      "tools/call",
      "--tool-name",
      "definitions_list",
      ...bearer(),
    ]);
    assert.equal(called.code, 0, called.stderr);
    const answer = JSON.parse(called.stdout);
    assert.equal(answer.structuredContent.definitions[0].name, "hello");
  });

  test("without a bearer the CLI is refused", async () => {
    const r = await inspector([...target(), "--method", "tools/list"]);
    assert.notEqual(r.code, 0);
    // The 401's `WWW-Authenticate: Bearer` sends the CLI to sign in (OAuth), which it cannot
    // do without a terminal: it stops with its own code rather than call anything.
    assert.match(`${r.stdout}${r.stderr}`, /auth_required|401/);
  });
});
