// The run console's read endpoints (issue 24) on the real `skein serve`: list filters
// (definition name, start time, with status and cursors) in either order (oldest or newest
// first) and `definition_name` on every run, the versions of a definition with their
// documents, and the tail of a deployment's log. Each is checked for its refusals and for
// namespace authorization.

import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { until } from "../../support/until.ts";
import { workerFixture } from "../deployments/support.ts";
import {
  adminToken,
  call,
  type ServerProcess,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";

const definition = (name: string, action: string) => ({
  name,
  task_queue: "nobody-serves-this",
  steps: [{ id: "a", call: { action, input: "{ 'n': 1.50 }" } }],
});

describe("console read endpoints (real skein serve)", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess;
  let admin: string;
  let alphaOnly: string;
  let fixture: Awaited<ReturnType<typeof workerFixture>>;
  const api = (token: string, method: string, path: string, body?: object) =>
    call(server.url, method, path, { token, ...(body === undefined ? {} : { body }) });
  // biome-ignore lint/suspicious/noExplicitAny: runs are JSON read field by field
  type Run = any;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(
      dir.path,
      '[namespaces]\ndefault = "alpha"\n[deployments]\nenabled = true',
    );
    // Info level: the supervised worker (it inherits the environment) writes lines to its log.
    server = await startServe(config, [], { SKEIN_LOG_LEVEL: "info" });
    admin = await adminToken(dir.path);
    alphaOnly = await tokenFor(dir.path, { namespaces: ["alpha"], deploy: true });
    fixture = await workerFixture(dir.path);
    // alpha: two versions of "first", one of "second"; beta: "first" again (other namespace).
    for (const [ns, name, action] of [
      ["alpha", "first", "x1"],
      ["alpha", "second", "y"],
      ["alpha", "first", "x2"],
      ["beta", "first", "z"],
    ] as const) {
      const r = await api(admin, "POST", "/workflows/definitions", {
        namespace: ns,
        definition: definition(name, action),
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
  });
  after(async () => {
    await server?.stop();
    await fixture?.endpoint.endpoint.close();
    await dir?.remove();
  });

  /** Every run a filter gives, page by page (the cursor carries the filters' positions). */
  async function listAll(token: string, filter: object, limit = 2): Promise<Run[]> {
    const runs: Run[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 50; pages++) {
      const r = await api(token, "POST", "/workflows/list", {
        ...filter,
        limit,
        ...(cursor === undefined ? {} : { cursor }),
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      runs.push(...r.body.runs);
      if (r.body.next_cursor === null) return runs;
      cursor = r.body.next_cursor;
    }
    throw new Error("too many pages");
  }

  test("list: definition and time filters, with status and cursors; definition_name on runs", async () => {
    // The older version of "first" pinned explicitly, the latest by name, and "second".
    const versions = await api(admin, "GET", "/workflows/definitions/versions?name=first");
    const older = versions.body.versions[1].version;
    const starts = [
      { name: "first", version: older },
      { name: "first" },
      { name: "second" },
      { name: "first" },
      { name: "second" },
      { name: "first" },
    ];
    for (const start of starts) {
      const r = await api(admin, "POST", "/workflows/start", start);
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    await api(admin, "POST", "/workflows/start", { namespace: "beta", name: "first" });
    const every = await listAll(admin, {});
    assert.equal(every.length, 6);
    for (const run of every) {
      assert.ok(["first", "second"].includes(run.definition_name), JSON.stringify(run));
      assert.match(run.definition_version, /^sha256:/);
      assert.equal(run.namespace, "alpha");
    }
    const ids = (runs: Run[]) => runs.map((r) => r.run_id);
    const byName = (name: string) => every.filter((r) => r.definition_name === name);
    assert.equal(byName("first").length, 4, "both versions of first");
    assert.deepEqual(ids(await listAll(admin, { definition: "first" })), ids(byName("first")));
    assert.deepEqual(ids(await listAll(admin, { definition: "second" }, 1)), ids(byName("second")));
    assert.deepEqual(await listAll(admin, { definition: "unknown" }), []);
    // Describe carries the name too.
    const one = await api(admin, "POST", "/workflows/describe", {
      workflow_id: every[0].workflow_id,
    });
    assert.equal(one.body.run.definition_name, "first");

    // Time: started_after inclusive, started_before exclusive, against the runs' own times.
    const pivot = every[2].started_at as string;
    const at = Date.parse(pivot);
    const later = every.filter((r) => Date.parse(r.started_at) >= at);
    const earlier = every.filter((r) => Date.parse(r.started_at) < at);
    assert.deepEqual(ids(await listAll(admin, { started_after: pivot })), ids(later));
    assert.deepEqual(ids(await listAll(admin, { started_before: pivot })), ids(earlier));
    // An offset names the same instant.
    const offset = new Date(at + 2 * 3600_000).toISOString().replace("Z", "+02:00");
    assert.deepEqual(ids(await listAll(admin, { started_after: offset })), ids(later));
    assert.deepEqual(
      ids(
        await listAll(admin, { definition: "first", status: "Running", started_after: pivot }, 1),
      ),
      ids(later.filter((r) => r.definition_name === "first")),
    );
    assert.deepEqual(await listAll(admin, { definition: "first", status: "Completed" }), []);
    assert.deepEqual(
      await listAll(admin, { started_after: "2999-01-01T00:00:00Z" }),
      [],
      "nothing starts in the future",
    );
  });

  test("list newest first: every filter, through pages; the cursor carries the order", async () => {
    const ids = (runs: Run[]) => runs.map((r) => r.run_id);
    const oldest = await listAll(admin, {});
    assert.ok(oldest.length >= 6, "the runs of the test before");
    assert.deepEqual(ids(await listAll(admin, { order: "oldest" })), ids(oldest));
    const newest = await listAll(admin, { order: "newest" });
    assert.deepEqual(ids(newest), ids(oldest).reverse());
    for (let i = 1; i < newest.length; i++) {
      assert.ok(Date.parse(newest[i - 1].started_at) >= Date.parse(newest[i].started_at));
    }
    const pivot = oldest[2].started_at as string;
    for (const filter of [
      { definition: "first" },
      { status: "Running" },
      { started_after: pivot },
      { started_before: pivot },
      { definition: "first", status: "Running", started_after: pivot },
    ]) {
      const forwards = ids(await listAll(admin, filter, 1));
      for (const limit of [1, 2, 1000]) {
        const backwards = ids(await listAll(admin, { ...filter, order: "newest" }, limit));
        assert.deepEqual(backwards, [...forwards].reverse(), JSON.stringify(filter));
      }
    }
    // A newest-first cursor continues newest first when the next body leaves order out.
    const first = await api(admin, "POST", "/workflows/list", { order: "newest", limit: 2 });
    assert.deepEqual(ids(first.body.runs), ids(newest.slice(0, 2)));
    const cursor = first.body.next_cursor as string;
    const next = await api(admin, "POST", "/workflows/list", { cursor, limit: 2 });
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.deepEqual(ids(next.body.runs), ids(newest.slice(2, 4)));
    // A cursor with the other order is refused, not answered in an order not asked for.
    const crossed = await api(admin, "POST", "/workflows/list", { cursor, order: "oldest" });
    assert.equal(crossed.status, 400, JSON.stringify(crossed.body));
    assert.equal(crossed.body.error.code, "invalid_cursor");
    assert.match(crossed.body.error.message, /"newest"/);
    const forward = await api(admin, "POST", "/workflows/list", { limit: 1 });
    const back = await api(admin, "POST", "/workflows/list", {
      cursor: forward.body.next_cursor,
      order: "newest",
    });
    assert.equal(back.status, 400, JSON.stringify(back.body));
    assert.equal(back.body.error.code, "invalid_cursor");
    // An oldest-first cursor is the two-part form cursors always had.
    const parts = JSON.parse(Buffer.from(forward.body.next_cursor, "base64url").toString());
    assert.deepEqual(parts, [Date.parse(oldest[0].started_at), oldest[0].run_id]);
    for (const forged of [
      [1, "r", "sideways"],
      [1, "r", "newest", "more"],
      [1e300, "r", "newest"],
      [1.5, "r"],
      ["1", "r"],
      { startedAt: 1, runId: "r" },
    ]) {
      const cursor = Buffer.from(JSON.stringify(forged)).toString("base64url");
      const r = await api(admin, "POST", "/workflows/list", { cursor });
      assert.equal(r.status, 400, JSON.stringify(forged));
      assert.equal(r.body.error.code, "invalid_cursor", JSON.stringify(r.body));
    }
  });

  test("list: bad filters are refused with decode_refused", async () => {
    for (const body of [
      { order: "latest" },
      { order: "Newest" },
      { order: 1 },
      { order: null },
      { started_after: "yesterday" },
      { started_after: "2026-13-01T00:00:00Z" },
      { started_before: "2026-05-01" },
      { started_before: 1_700_000_000_000 },
      { definition: "" },
      { definition: 7 },
    ]) {
      const r = await api(admin, "POST", "/workflows/list", body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, "decode_refused", JSON.stringify(r.body));
    }
  });

  test("definition versions: latest first, each with its document; 404 and refusals", async () => {
    const r = await api(admin, "GET", "/workflows/definitions/versions?namespace=alpha&name=first");
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.namespace, "alpha");
    assert.equal(r.body.name, "first");
    const [latest, older] = r.body.versions;
    assert.equal(r.body.versions.length, 2);
    assert.deepEqual([latest.latest, older.latest], [true, false]);
    assert.equal(latest.document.steps[0].call.action, "x2");
    assert.equal(older.document.steps[0].call.action, "x1");
    assert.equal(latest.document.name, "first");
    assert.equal(latest.registered_by, older.registered_by);
    assert.ok(Date.parse(latest.registered_at) >= Date.parse(older.registered_at));
    // The latest is what the definitions list names.
    const list = await api(admin, "GET", "/workflows/definitions");
    const first = list.body.definitions.find((d: { name: string }) => d.name === "first");
    assert.equal(first.version, latest.version);
    assert.equal(first.versions, 2);

    const missing = await api(admin, "GET", "/workflows/definitions/versions?name=nope");
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, "definition_not_found");
    for (const query of ["", "?name=", "?name=a&name=b", "?name=first&bogus=1"]) {
      const bad = await api(admin, "GET", `/workflows/definitions/versions${query}`);
      assert.equal(bad.status, 400, query);
      assert.equal(bad.body.error.code, "decode_refused", query);
    }
  });

  test("deployment logs: the last lines of this node's log, bounded; refusals", async () => {
    const put = await api(
      admin,
      "PUT",
      "/worker-deployments/live",
      fixture.record({ namespaces: ["alpha"] }, ["--namespace", "alpha"]),
    );
    assert.equal(put.status, 200, JSON.stringify(put.body));
    // A running deployment's worker writes its log; the endpoint shows its last lines.
    const shown = await until("log lines of the running worker", async () => {
      const r = await api(admin, "GET", "/worker-deployments/live/logs?lines=5");
      return r.status === 200 && r.body.lines.length > 0 && r.body;
    });
    assert.equal(shown.name, "live");
    assert.equal(typeof shown.node_id, "string");
    assert.ok(shown.lines.length <= 5);
    await api(admin, "POST", "/worker-deployments/live/desired-state", { desired: "stopped" });

    // A stopped deployment with a large log (12 MiB, past the tail's byte bound): only the
    // end is read, lines are whole, and the last N come back in order.
    const stopped = fixture.record({ namespaces: ["alpha"], desired: "stopped" }, [
      "--namespace",
      "alpha",
    ]);
    assert.equal((await api(admin, "PUT", "/worker-deployments/big", stopped)).status, 200);
    const none = await api(admin, "GET", "/worker-deployments/big/logs");
    assert.deepEqual(none.body, { name: "big", node_id: shown.node_id, lines: [] }, "no log yet");
    const logs = join(dir.path, "data", "deployments", "logs");
    await mkdir(logs, { recursive: true });
    const line = (i: number) => `line ${i} ${"é".repeat(i % 50)}`;
    const text = Array.from({ length: 200_000 }, (_, i) => line(i)).join("\n");
    await writeFile(join(logs, "big.log"), `${text}\n`);
    const tail = await api(admin, "GET", "/worker-deployments/big/logs?lines=1000");
    assert.deepEqual(
      tail.body.lines,
      Array.from({ length: 1000 }, (_, i) => line(199_000 + i)),
    );
    const dflt = await api(admin, "GET", "/worker-deployments/big/logs");
    assert.equal(dflt.body.lines.length, 200, "default 200 lines");
    assert.equal(dflt.body.lines.at(-1), line(199_999));

    const absent = await api(admin, "GET", "/worker-deployments/ghost/logs");
    assert.equal(absent.status, 404);
    assert.equal(absent.body.error.code, "deployment_not_found");
    for (const lines of ["0", "1001", "-1", "1.5", "x", ""]) {
      const bad = await api(admin, "GET", `/worker-deployments/big/logs?lines=${lines}`);
      assert.equal(bad.status, 400, lines);
      assert.equal(bad.body.error.code, "decode_refused", lines);
    }
  });

  test("authorization: a token for alpha is refused beta on every new read", async () => {
    const list = await api(alphaOnly, "POST", "/workflows/list", { namespace: "beta" });
    assert.equal(list.status, 403);
    assert.equal(list.body.error.code, "forbidden");
    const filtered = await api(alphaOnly, "POST", "/workflows/list", {
      namespace: "beta",
      definition: "first",
    });
    assert.equal(filtered.status, 403);
    const own = await api(alphaOnly, "POST", "/workflows/list", { definition: "first" });
    assert.equal(own.status, 200);
    const versions = await api(
      alphaOnly,
      "GET",
      "/workflows/definitions/versions?namespace=beta&name=first",
    );
    assert.equal(versions.status, 403);
    assert.equal(versions.body.error.code, "forbidden");
    assert.equal(
      (await api(alphaOnly, "GET", "/workflows/definitions/versions?name=first")).status,
      200,
    );
    // Logs are authorized as the deployment record is: a record serving beta is absent for
    // an alpha token (404, as GET /worker-deployments/{name}); no deploy grant is 403.
    const beta = fixture.record({ namespaces: ["beta"], desired: "stopped" }, [
      "--namespace",
      "beta",
    ]);
    assert.equal((await api(admin, "PUT", "/worker-deployments/theirs", beta)).status, 200);
    const theirs = await api(alphaOnly, "GET", "/worker-deployments/theirs/logs");
    assert.equal(theirs.status, 404);
    assert.equal(theirs.body.error.code, "deployment_not_found");
    const noDeploy = await tokenFor(dir.path, { namespaces: "*" });
    const refused = await api(noDeploy, "GET", "/worker-deployments/theirs/logs");
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, "forbidden");
    const anonymous = await call(server.url, "GET", "/worker-deployments/theirs/logs");
    assert.equal(anonymous.status, 401);
  });
});
