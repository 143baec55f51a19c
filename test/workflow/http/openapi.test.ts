// `GET /openapi.json` on the real `skein serve`: a valid OpenAPI 3.1 document
// (@readme/openapi-parser), made from the routes Fastify registered, so every route is in
// it with a summary and, for routes with a body, the JSON Schema of the decoder the handler
// runs (a route added without `config.api` is marked undocumented and fails here). Every
// operation it lists answers on the server (none is route_not_found), and the request
// schemas agree with the decoders on sample bodies.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { validate } from "@readme/openapi-parser";
import { Ajv2020 } from "ajv/dist/2020.js";
import {
  adminToken,
  call,
  type ServerProcess,
  startServe,
  tempDir,
  writeConfig,
} from "../support/server.ts";

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is read field by field
type Doc = any;

const METHODS = ["get", "put", "post", "delete", "patch"];

describe("GET /openapi.json (real skein serve)", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess;
  let admin: string;
  let doc: Doc;

  before(async () => {
    dir = await tempDir();
    // Deployments and workflows on: every route group is registered.
    const config = await writeConfig(
      dir.path,
      '[namespaces]\ndefault = "default"\n[deployments]\nenabled = true',
    );
    server = await startServe(config);
    admin = await adminToken(dir.path);
    const r = await call(server.url, "GET", "/openapi.json", { token: admin });
    assert.equal(r.status, 200);
    doc = r.body;
  });
  after(async () => {
    await server?.stop();
    await dir?.remove();
  });

  const operations = (): [path: string, method: string, op: Doc][] =>
    Object.entries(doc.paths as Record<string, Doc>).flatMap(([path, item]) =>
      METHODS.filter((m) => m in item).map((m) => [path, m, item[m]] as [string, string, Doc]),
    );

  test("needs a bearer like every route but /health", async () => {
    assert.equal((await call(server.url, "GET", "/openapi.json")).status, 401);
  });

  test("is a valid OpenAPI 3.1 document", async () => {
    assert.equal(doc.openapi, "3.1.0");
    const result = await validate(structuredClone(doc));
    assert.ok(result.valid, JSON.stringify(result));
  });

  test("every registered route is documented: a summary, and a body schema where it reads one", () => {
    const undocumented = operations()
      .filter(([, , op]) => op["x-skein-undocumented"] === true)
      .map(([path, method]) => `${method.toUpperCase()} ${path}`);
    assert.deepEqual(undocumented, [], "routes without config.api");
    for (const [path, method, op] of operations()) {
      assert.ok(op.summary.length > 0, `${method} ${path}`);
      if (method === "post" || method === "put") {
        assert.ok(op.requestBody?.content?.["application/json"]?.schema, `${method} ${path} body`);
      }
    }
  });

  test("the routes the issue and spec name are all there", () => {
    const listed = new Set(operations().map(([path, method]) => `${method.toUpperCase()} ${path}`));
    for (const route of [
      "GET /health",
      "GET /metrics",
      "GET /openapi.json",
      "POST /namespaces",
      "GET /namespaces",
      "GET /namespaces/records",
      "GET /worker-deployments",
      "GET /worker-deployments/{name}",
      "GET /worker-deployments/{name}/logs",
      "PUT /worker-deployments/{name}",
      "POST /worker-deployments/{name}/desired-state",
      "DELETE /worker-deployments/{name}",
      "GET /workers/managed",
      "POST /workflows/attempts",
      "POST /workflows/intervene",
      "POST /workflows/transcript",
      "POST /workflows/transcript/stream",
      "POST /workflows/history/stream",
      "POST /workflows/definitions",
      "GET /workflows/definitions/versions",
      "POST /workflows/start",
      "POST /workflows/describe",
      "POST /workflows/list",
      "POST /workflows/history",
      "POST /workflows/signal",
      "POST /workflows/cancel",
      "POST /workflows/pause",
      "POST /workflows/resume",
    ]) {
      assert.ok(listed.has(route), `${route} is missing`);
    }
  });

  test("every listed operation answers on the server (never route_not_found)", async () => {
    for (const [path, method] of operations()) {
      const url = path.replace(/\{[^}]+\}/g, "x");
      const body = method === "post" || method === "put" ? {} : undefined;
      const response = await fetch(`${server.url}${url}`, {
        method: method.toUpperCase(),
        headers: {
          authorization: `Bearer ${admin}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      assert.ok(!text.includes("route_not_found"), `${method.toUpperCase()} ${path}: ${text}`);
    }
  });

  test("request schemas compile (JSON Schema 2020-12) and agree with the decoders", async () => {
    const ajv = new Ajv2020({ strict: true, validateFormats: false });
    const schemaOf = (path: string) =>
      doc.paths[path].post.requestBody.content["application/json"].schema;
    for (const [path, method, op] of operations()) {
      const schema = op.requestBody?.content?.["application/json"]?.schema;
      if (schema !== undefined) assert.doesNotThrow(() => ajv.compile(schema), `${method} ${path}`);
    }
    const start = ajv.compile(schemaOf("/workflows/start"));
    assert.ok(
      start({
        name: "chain",
        input: { n: 1 },
        workflow_id: "0190a6f4-1b2c-7d3e-8f40-123456789abc",
      }),
    );
    assert.equal(start({ name: "chain", bogus: true }), false);
    const bogus = await call(server.url, "POST", "/workflows/start", {
      token: admin,
      body: { name: "chain", bogus: true },
    });
    assert.equal(bogus.status, 400, "the decoder refuses what the schema refuses");
    const intervene = ajv.compile(schemaOf("/workflows/intervene"));
    const target = {
      workflow_id: "0190a6f4-1b2c-7d3e-8f40-123456789abc",
      run_id: "0190a6f4-1b2c-7d3e-8f40-123456789abd",
      activity_id: 0,
      attempt: 1,
    };
    assert.ok(intervene({ ...target, kind: { kind: "Cancel", reason: "stop" } }));
    assert.equal(intervene({ ...target, kind: { kind: "Teleport" } }), false);
    const list = ajv.compile(schemaOf("/workflows/list"));
    assert.deepEqual(schemaOf("/workflows/list").properties.order.enum, ["oldest", "newest"]);
    assert.ok(list({ order: "newest", status: "Running", limit: 10 }));
    assert.equal(list({ order: "latest" }), false);
  });
});
