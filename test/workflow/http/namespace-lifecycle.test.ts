// Namespaces through the real server: a request that fails never auto-creates its
// namespace; `GET /namespaces/records/{name}` describes one with what it holds; `DELETE
// /namespaces/{name}` deletes an empty one with its definitions and is refused while it has
// runs, and for the default namespace. Both need the grant on the name, checked first.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  adminToken,
  call,
  type ServerProcess,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";

const DEFINITION = "name: d\ntask_queue: q\nsteps:\n  - { id: a, call: { action: noop } }\n";

let dir: Awaited<ReturnType<typeof tempDir>>;
let server: ServerProcess;
let token: string;

before(async () => {
  dir = await tempDir();
  // auto_create is open: a namespace appears on first successful use.
  server = await startServe(await writeConfig(dir.path, '[namespaces]\ndefault = "default"'));
  token = await adminToken(dir.path);
});
after(async () => {
  await server?.stop();
  await dir?.remove();
});

const names = async () =>
  (await call(server.url, "GET", "/namespaces", { token })).body.namespaces.map(
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
      const r = await call(server.url, "POST", path, { token, body });
      assert.equal(r.status, status, JSON.stringify(r.body));
      assert.equal(r.body.error.code, code);
      const namespace = (body as { namespace: string }).namespace;
      assert.ok(!(await names()).includes(namespace), `${namespace} was created`);
    });
  }

  test("a register that succeeds does create it (auto_create open)", async () => {
    const r = await call(server.url, "POST", "/workflows/definitions", {
      token,
      body: { namespace: "ghost-4", definition: DEFINITION },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok((await names()).includes("ghost-4"));
  });
});

describe("describe and delete", () => {
  test("describe counts runs by status and definitions; delete is refused while runs exist", async () => {
    await call(server.url, "POST", "/namespaces", { token, body: { name: "busy team" } });
    const reg = await call(server.url, "POST", "/workflows/definitions", {
      token,
      body: { namespace: "busy team", definition: DEFINITION },
    });
    assert.equal(reg.status, 200);
    const start = await call(server.url, "POST", "/workflows/start", {
      token,
      body: { namespace: "busy team", name: "d" },
    });
    assert.equal(start.status, 200, JSON.stringify(start.body));
    const d = await call(server.url, "GET", "/namespaces/records/busy%20team", { token });
    assert.equal(d.status, 200, JSON.stringify(d.body));
    assert.equal(d.body.name, "busy team");
    assert.deepEqual(d.body.runs, { Running: 1 });
    assert.equal(d.body.definitions, 1);
    assert.deepEqual(d.body.settings, { max_in_flight_activities: 1024, ceiling_in_force: false });

    const refused = await call(server.url, "DELETE", "/namespaces/busy%20team", { token });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, "namespace_not_empty");
    assert.match(refused.body.error.message, /has 1 run;/);
    assert.ok((await names()).includes("busy team"), "nothing was deleted");
  });

  test("an empty namespace is deleted with its definitions, then is gone", async () => {
    await call(server.url, "POST", "/workflows/definitions", {
      token,
      body: { namespace: "idle", definition: DEFINITION },
    });
    const r = await call(server.url, "DELETE", "/namespaces/idle", { token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.deleted, true);
    assert.equal(r.body.record.name, "idle");
    assert.equal(r.body.definitions_deleted, 1);
    assert.ok(!(await names()).includes("idle"));
    const gone = await call(server.url, "GET", "/namespaces/records/idle", { token });
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error.code, "namespace_not_found");
    const again = await call(server.url, "DELETE", "/namespaces/idle", { token });
    assert.equal(again.status, 404);
    // Re-created, it starts empty: the old definitions went with it.
    await call(server.url, "POST", "/namespaces", { token, body: { name: "idle" } });
    const fresh = await call(server.url, "GET", "/namespaces/records/idle", { token });
    assert.equal(fresh.body.definitions, 0);
  });

  test("the default namespace is never deleted", async () => {
    const r = await call(server.url, "DELETE", "/namespaces/default", { token });
    assert.equal(r.status, 409);
    assert.equal(r.body.error.code, "namespace_is_default");
  });

  test("without the grant: 403 whether or not the namespace exists (no existence leak)", async () => {
    const other = await tokenFor(dir.path, { namespaces: ["mine"] });
    for (const name of ["busy%20team", "does-not-exist"]) {
      for (const method of ["GET", "DELETE"]) {
        const path = method === "GET" ? `/namespaces/records/${name}` : `/namespaces/${name}`;
        const r = await call(server.url, method, path, { token: other });
        assert.equal(r.status, 403, `${method} ${path}`);
        assert.equal(r.body.error.code, "forbidden");
      }
    }
    const noBearer = await call(server.url, "DELETE", "/namespaces/busy%20team");
    assert.equal(noBearer.status, 401);
  });

  test("a name with a control character is refused", async () => {
    const r = await call(server.url, "GET", "/namespaces/records/a%07b", { token });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, "invalid_namespace_name");
  });
});
