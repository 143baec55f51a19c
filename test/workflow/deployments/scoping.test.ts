// Deployments are scoped to the caller's namespaces, against the real
// `skein serve`: a record is the caller's when the caller may access every namespace it
// serves. Others' records are absent from listings and reads (404 for GET, DELETE and
// desired-state); PUT needs every namespace of the new body and of the record it replaces.
// Undecodable rows (their namespaces unknown) are visible only to a caller granted "*".

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, describe, test } from "node:test";
import { writeJson } from "../../support/worker-endpoint.ts";
import {
  adminToken,
  call,
  type ServerProcess,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";

describe("worker deployments are scoped to the caller's namespaces", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let configFile: string;
  let server: ServerProcess;
  let admin: string;
  let alpha: string;
  let document: string;
  let token: string;

  const api = (token: string, method: string, path: string, body?: object) =>
    call(server.url, method, path, { token, ...(body === undefined ? {} : { body }) });
  const record = (namespaces: string[], extra: string[] = []) => ({
    artifact: {
      type: "builtin",
      verb: [
        "worker",
        "exec",
        document,
        "--namespace",
        namespaces[0]!,
        "--token-file",
        token,
        ...extra,
      ],
    },
    namespaces,
    task_queue: "q",
    desired: "stopped",
  });
  const names = (r: { body: { deployments?: { name: string }[]; managed?: { name: string }[] } }) =>
    (r.body.deployments ?? r.body.managed ?? []).map((d) => d.name).sort();

  before(async () => {
    dir = await tempDir();
    configFile = await writeConfig(dir.path, "[deployments]\nenabled = true");
    server = await startServe(configFile);
    admin = await adminToken(dir.path);
    alpha = await tokenFor(dir.path, { subject: "alice", namespaces: ["alpha"], deploy: true });
    document = await writeJson(dir.path, "worker.json", {
      name: "w",
      task_queue: "q",
      actions: { echo: { command: ["cat"] } },
    });
    token = join(dir.path, "worker.token");
    await writeFile(token, "x.y.z\n");
    for (const [name, namespaces] of [
      ["a", ["alpha"]],
      ["b", ["beta"]],
      ["ab", ["alpha", "beta"]],
    ] as const) {
      const r = await api(admin, "PUT", `/worker-deployments/${name}`, record([...namespaces]));
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
  });
  after(async () => {
    await server?.stop();
    await dir?.remove();
  });

  test("listing shows only records all of whose namespaces the caller can access", async () => {
    assert.deepEqual(names(await api(alpha, "GET", "/worker-deployments")), ["a"]);
    assert.deepEqual(names(await api(admin, "GET", "/worker-deployments")), ["a", "ab", "b"]);
  });

  test("the managed view likewise", async () => {
    assert.deepEqual(names(await api(alpha, "GET", "/workers/managed")), ["a"]);
    assert.deepEqual(names(await api(admin, "GET", "/workers/managed")), ["a", "ab", "b"]);
  });

  test("reading another namespace's record is 404, as if absent", async () => {
    assert.equal((await api(alpha, "GET", "/worker-deployments/a")).status, 200);
    for (const name of ["b", "ab"]) {
      const r = await api(alpha, "GET", `/worker-deployments/${name}`);
      assert.deepEqual([r.status, r.body.error.code], [404, "deployment_not_found"], name);
    }
  });

  test("a PUT serving a namespace outside the grants is 403 (the issue's admin.token case too)", async () => {
    const r = await api(alpha, "PUT", "/worker-deployments/mine", record(["beta"]));
    assert.deepEqual([r.status, r.body.error.code], [403, "forbidden"]);
    const both = await api(alpha, "PUT", "/worker-deployments/mine", record(["alpha", "beta"]));
    assert.deepEqual([both.status, both.body.error.code], [403, "forbidden"]);
    const withAdminToken = record(["beta"]);
    withAdminToken.artifact.verb[withAdminToken.artifact.verb.indexOf(token)] = join(
      dir.path,
      "data",
      "admin.token",
    );
    const issue = await api(alpha, "PUT", "/worker-deployments/mine", withAdminToken);
    assert.equal(issue.status, 403);
  });

  test("a PUT over another namespace's record is 403, even when the new body is the caller's", async () => {
    for (const name of ["b", "ab"]) {
      const r = await api(alpha, "PUT", `/worker-deployments/${name}`, record(["alpha"]));
      assert.deepEqual([r.status, r.body.error.code], [403, "forbidden"], name);
    }
    const b = await api(admin, "GET", "/worker-deployments/b");
    assert.deepEqual(b.body.deployment.namespaces, ["beta"]);
  });

  test("desired-state and DELETE of another namespace's record are 404 and change nothing", async () => {
    for (const name of ["b", "ab"]) {
      const d = await api(alpha, "POST", `/worker-deployments/${name}/desired-state`, {
        desired: "running",
      });
      assert.deepEqual([d.status, d.body.error.code], [404, "deployment_not_found"]);
      const del = await api(alpha, "DELETE", `/worker-deployments/${name}`);
      assert.deepEqual([del.status, del.body.error.code], [404, "deployment_not_found"]);
      const still = await api(admin, "GET", `/worker-deployments/${name}`);
      assert.deepEqual([still.status, still.body.deployment.desired], [200, "stopped"]);
    }
  });

  test("the caller's own records stay writable", async () => {
    const put = await api(
      alpha,
      "PUT",
      "/worker-deployments/a",
      record(["alpha"], ["--concurrency", "2"]),
    );
    assert.deepEqual([put.status, put.body.outcome], [200, "updated"]);
    const created = await api(alpha, "PUT", "/worker-deployments/a2", record(["alpha"]));
    assert.deepEqual([created.status, created.body.outcome], [200, "created"]);
    const del = await api(alpha, "DELETE", "/worker-deployments/a2");
    assert.equal(del.status, 200);
  });

  test("after a restart: undecodable rows only for '*', and a stored record using the admin token is not launched", async () => {
    await server.stop();
    const db = new DatabaseSync(join(dir.path, "data", "skein.db"));
    db.prepare(
      "INSERT INTO worker_deployments (name, document, created_at, updated_at) VALUES (?, ?, ?, ?)",
    ).run("broken", '{"artifact": 7}', 1, 1);
    // A record stored before the credential rule: the admin token as the worker's token.
    const row = db.prepare("SELECT document FROM worker_deployments WHERE name = 'a'").get() as {
      document: string;
    };
    const old = JSON.parse(row.document);
    old.artifact.verb[old.artifact.verb.indexOf(token)] = join(dir.path, "data", "admin.token");
    old.desired = "running";
    db.prepare(
      "INSERT INTO worker_deployments (name, document, created_at, updated_at) VALUES (?, ?, ?, ?)",
    ).run("legacy", JSON.stringify(old), 1, 1);
    db.close();
    server = await startServe(configFile);

    const scoped = await api(alpha, "GET", "/worker-deployments");
    assert.deepEqual(scoped.body.undecodable, []);
    const all = await api(admin, "GET", "/worker-deployments");
    assert.deepEqual(
      all.body.undecodable.map((u: { name: string }) => u.name),
      ["broken"],
    );
    const get = await api(alpha, "GET", "/worker-deployments/broken");
    assert.deepEqual([get.status, get.body.error.code], [404, "deployment_not_found"]);
    const replace = await api(alpha, "PUT", "/worker-deployments/broken", record(["alpha"]));
    assert.deepEqual([replace.status, replace.body.error.code], [403, "forbidden"]);

    const legacy = (await api(admin, "GET", "/workers/managed")).body.managed.find(
      (m: { name: string }) => m.name === "legacy",
    );
    assert.equal(legacy.pid, null, "not launched at start");
    const start = await api(admin, "POST", "/worker-deployments/legacy/desired-state", {
      desired: "running",
    });
    assert.deepEqual([start.status, start.body.error.code], [400, "token_file_refused"]);
  });
});
