// JSON nesting depth at the HTTP edge: a body nested deeper than
// MAX_JSON_DEPTH is refused with 400 `json_too_deep` before any route sees it, so no reply
// or stored text can overflow JSON.stringify later (it did at ~3,000 levels: a 500).

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MAX_JSON_DEPTH } from "../../../src/common/decode/index.ts";
import {
  adminToken,
  call,
  type ServerProcess,
  startServe,
  tempDir,
  writeConfig,
} from "../support/server.ts";

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("JSON nesting depth on every HTTP body (real skein serve)", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess;
  let admin: string;

  before(async () => {
    dir = await tempDir();
    server = await startServe(await writeConfig(dir.path, '[namespaces]\ndefault = "default"'));
    admin = await adminToken(dir.path);
    const reg = await call(server.url, "POST", "/workflows/definitions", {
      token: admin,
      body: { definition: "name: d\ntask_queue: q\nsteps: [{id: a, call: {action: x}}]" },
    });
    assert.equal(reg.status, 200, JSON.stringify(reg.body));
  });
  after(async () => {
    await server?.stop();
    await dir?.remove();
  });

  const start = (input: string) =>
    call(server.url, "POST", "/workflows/start", {
      token: admin,
      body: `{"name":"d","input":${input}}`,
    });

  test("a run input nested 4,500 levels is 400 json_too_deep, not a 500", async () => {
    const r = await start(nested(4_500));
    assert.deepEqual([r.status, r.body.error.code], [400, "json_too_deep"]);
    assert.match(r.body.error.message, new RegExp(`${MAX_JSON_DEPTH}`));
    const health = await call(server.url, "GET", "/health");
    assert.equal(health.status, 200);
  });

  test("nesting inside strings does not count", async () => {
    const r = await start(JSON.stringify({ text: nested(4_500) }));
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });

  test(`a body exactly ${MAX_JSON_DEPTH} levels deep is accepted, one more is refused`, async () => {
    // The body itself is one level, `input` the rest.
    const ok = await start(nested(MAX_JSON_DEPTH - 1));
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const deep = await start(nested(MAX_JSON_DEPTH));
    assert.deepEqual([deep.status, deep.body.error.code], [400, "json_too_deep"]);
  });

  test("every JSON route gets the rule (namespaces, deployments)", async () => {
    for (const [method, path] of [
      ["POST", "/namespaces"],
      ["PUT", "/worker-deployments/x"],
      ["POST", "/workflows/describe"],
    ] as const) {
      const r = await call(server.url, method, path, { token: admin, body: nested(3_000) });
      assert.deepEqual([r.status, r.body.error.code], [400, "json_too_deep"], path);
    }
  });
});
