// Namespaces through the real server: a request that fails never auto-creates its
// namespace; `GET /namespaces/records/{name}` describes one with what it holds; `DELETE
// /namespaces/{name}` deletes an empty one with its definitions and is refused while it has
// runs, and for the default namespace. Both need the grant on the name, checked first.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { call, serveForSuite, tokenFor } from "../support/server.ts";

const DEFINITION = "name: d\ntask_queue: q\nsteps:\n  - { id: a, call: { action: noop } }\n";

const s = serveForSuite('[namespaces]\ndefault = "default"');

const names = async () =>
  (await call(s.server.url, "GET", "/namespaces", { token: s.admin })).body.namespaces.map(
    (n: { name: string }) => n.name,
  );

describe("a failing request does not auto-create its namespace", () => {
  const rows: [name: string, path: string, body: object, status: number, code: string][] = [
    [
      "start of an unknown definition",
      "/workflows/start",
      { namespace: "ghost-1", name: "nope" },
      404,
      "definition_not_found",
    ],
    [
      "start of an unknown version",
      "/workflows/start",
      { namespace: "ghost-2", name: "d", version: "sha256:00" },
      404,
      "definition_not_found",
    ],
    [
      "register of a refused definition",
      "/workflows/definitions",
      { namespace: "ghost-3", definition: "name: x\nsteps: []\n" },
      400,
      "invalid_definition",
    ],
  ];
  for (const [name, path, body, status, code] of rows) {
    test(name, async () => {
      const r = await call(s.server.url, "POST", path, { token: s.admin, body });
      assert.equal(r.status, status, JSON.stringify(r.body));
      assert.equal(r.body.error.code, code);
      const namespace = (body as { namespace: string }).namespace;
      assert.ok(!(await names()).includes(namespace), `${namespace} was created`);
    });
  }

  test("a register that succeeds does create it (auto_create open)", async () => {
    const r = await call(s.server.url, "POST", "/workflows/definitions", {
      token: s.admin,
      body: { namespace: "ghost-4", definition: DEFINITION },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok((await names()).includes("ghost-4"));
  });
});

describe("describe and delete", () => {
  test("describe counts runs by status and definitions; delete is refused while runs exist", async () => {
    await call(s.server.url, "POST", "/namespaces", {
      token: s.admin,
      body: { name: "busy team" },
    });
    const reg = await call(s.server.url, "POST", "/workflows/definitions", {
      token: s.admin,
      body: { namespace: "busy team", definition: DEFINITION },
    });
    assert.equal(reg.status, 200);
    const start = await call(s.server.url, "POST", "/workflows/start", {
      token: s.admin,
      body: { namespace: "busy team", name: "d" },
    });
    assert.equal(start.status, 200, JSON.stringify(start.body));
    const d = await call(s.server.url, "GET", "/namespaces/records/busy%20team", {
      token: s.admin,
    });
    assert.equal(d.status, 200, JSON.stringify(d.body));
    assert.equal(d.body.name, "busy team");
    assert.deepEqual(d.body.runs, { Running: 1 });
    assert.equal(d.body.definitions, 1);
    assert.deepEqual(d.body.settings, { max_in_flight_activities: 1024, ceiling_in_force: false });

    const refused = await call(s.server.url, "DELETE", "/namespaces/busy%20team", {
      token: s.admin,
    });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, "namespace_not_empty");
    assert.match(refused.body.error.message, /has 1 run;/);
    assert.ok((await names()).includes("busy team"), "nothing was deleted");
  });

  test("an empty namespace is deleted with its definitions, then is gone", async () => {
    await call(s.server.url, "POST", "/workflows/definitions", {
      token: s.admin,
      body: { namespace: "idle", definition: DEFINITION },
    });
    const r = await call(s.server.url, "DELETE", "/namespaces/idle", { token: s.admin });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.deleted, true);
    assert.equal(r.body.record.name, "idle");
    assert.equal(r.body.definitions_deleted, 1);
    assert.ok(!(await names()).includes("idle"));
    const gone = await call(s.server.url, "GET", "/namespaces/records/idle", { token: s.admin });
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error.code, "namespace_not_found");
    const again = await call(s.server.url, "DELETE", "/namespaces/idle", { token: s.admin });
    assert.equal(again.status, 404);
    // Re-created, it starts empty: the old definitions went with it.
    await call(s.server.url, "POST", "/namespaces", { token: s.admin, body: { name: "idle" } });
    const fresh = await call(s.server.url, "GET", "/namespaces/records/idle", { token: s.admin });
    assert.equal(fresh.body.definitions, 0);
  });

  test("the default namespace is never deleted", async () => {
    const r = await call(s.server.url, "DELETE", "/namespaces/default", { token: s.admin });
    assert.equal(r.status, 409);
    assert.equal(r.body.error.code, "namespace_is_default");
  });

  test("without the grant: 403 whether or not the namespace exists (no existence leak)", async () => {
    const other = await tokenFor(s.dir.path, { namespaces: ["mine"] });
    for (const name of ["busy%20team", "does-not-exist"]) {
      for (const method of ["GET", "DELETE"]) {
        const path = method === "GET" ? `/namespaces/records/${name}` : `/namespaces/${name}`;
        const r = await call(s.server.url, method, path, { token: other });
        assert.equal(r.status, 403, `${method} ${path}`);
        assert.equal(r.body.error.code, "forbidden");
      }
    }
    const noBearer = await call(s.server.url, "DELETE", "/namespaces/busy%20team");
    assert.equal(noBearer.status, 401);
  });

  test("a name with a control character is refused", async () => {
    const r = await call(s.server.url, "GET", "/namespaces/records/a%07b", { token: s.admin });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, "invalid_namespace_name");
  });
});
