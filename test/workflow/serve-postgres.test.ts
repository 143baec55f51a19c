import assert from "node:assert/strict";
import { describe, test } from "node:test";
import pg from "pg";
import { freshSchema, POSTGRES_URL, postgresUnreachable } from "../support/postgres.ts";
import { freePort, moduleWorker } from "../support/worker-endpoint.ts";
import { adminToken, call, skein, startServe, tempDir, writeConfig } from "./support/server.ts";

const URL = POSTGRES_URL;

describe("skein serve on PostgreSQL storage (real process)", {
  skip: await postgresUnreachable(),
}, () => {
  test("a namespace acknowledged before SIGKILL is there after restart", async (t) => {
    const dir = await tempDir();
    t.after(() => dir.remove());
    const schema = freshSchema(t);
    const config = await writeConfig(
      dir.path,
      `[storage]\nurl = "${URL}"\nschema = "${schema}"\n[namespaces]\ndefault = "home"`,
    );
    const first = await startServe(config);
    assert.match(first.stdout(), new RegExp(`storage: postgres .*\\(schema ${schema}\\)`));
    const token = await adminToken(dir.path);
    const created = await call(first.url, "POST", "/namespaces", { token, body: { name: "pg" } });
    assert.deepEqual(created.body, { name: "pg", created: true });
    assert.equal((await first.stop("SIGKILL")).signal, "SIGKILL");

    const second = await startServe(config);
    try {
      const listed = await call(second.url, "GET", "/namespaces", { token });
      assert.deepEqual(listed.body, { namespaces: [{ name: "home" }, { name: "pg" }] });
    } finally {
      assert.equal((await second.stop()).code, 0);
    }
  });

  test("a run started before SIGKILL of the server completes after restart, each step once", async (t) => {
    const dir = await tempDir();
    t.after(() => dir.remove());
    const schema = freshSchema(t);
    const config = await writeConfig(
      dir.path,
      `[storage]\nurl = "${URL}"\nschema = "${schema}"\n[namespaces]\ndefault = "home"`,
    );
    const grpc = ["--grpc-listen", `127.0.0.1:${await freePort()}`];
    const first = await startServe(config, grpc);
    const token = await adminToken(dir.path);
    const worker = await moduleWorker(dir.path, {
      endpoint: first.grpc!,
      token,
      actions: ["hold"],
      args: ["--namespace", "home"],
    });
    const steps = Array.from(
      { length: 4 },
      (_, i) => `  - { id: s${i}, call: { action: hold, input: "{ 'ms': 150 }" } }`,
    );
    const definition = `name: four\ntask_queue: q\nsteps:\n${steps.join("\n")}\n`;
    let second: Awaited<ReturnType<typeof startServe>> | undefined;
    try {
      await call(first.url, "POST", "/workflows/definitions", { token, body: { definition } });
      const start = await call(first.url, "POST", "/workflows/start", {
        token,
        body: { name: "four" },
      });
      const body = { workflow_id: start.body.workflow_id };
      const completed = async (url: string) => {
        const r = await call(url, "POST", "/workflows/history", { token, body });
        return (r.body.events as { type: string; activity_id: number }[])
          .filter((e) => e.type === "ActivityCompleted")
          .map((e) => e.activity_id);
      };
      for (let i = 0; (await completed(first.url)).length < 1; i++) {
        assert.ok(i < 1000, worker.stderr());
        await new Promise((done) => setTimeout(done, 20));
      }
      await first.stop("SIGKILL");
      second = await startServe(config, grpc);
      for (let i = 0; ; i++) {
        const r = await call(second.url, "POST", "/workflows/describe", { token, body });
        if (r.body.run.status !== "Running") {
          assert.equal(r.body.run.status, "Completed");
          break;
        }
        assert.ok(i < 1000, worker.stderr());
        await new Promise((done) => setTimeout(done, 20));
      }
      assert.deepEqual(await completed(second.url), [1, 2, 3, 4]);
    } finally {
      await first.stop("SIGKILL");
      worker.kill();
      await worker.exited;
      await second?.stop();
    }
  });

  test("one node per schema: a second server is refused; losing the lease stops the first", async (t) => {
    const dir = await tempDir();
    t.after(() => dir.remove());
    const schema = freshSchema(t);
    const client = new pg.Client({ connectionString: URL });
    await client.connect();
    t.after(() => client.end());
    const config = await writeConfig(
      dir.path,
      `[storage]\nurl = "${URL}"\nschema = "${schema}"\n[namespaces]\ndefault = "home"`,
    );
    const first = await startServe(config);
    try {
      const refused = skein([
        "serve",
        "--config",
        config,
        "--listen",
        "127.0.0.1:0",
        "--grpc-listen",
        "127.0.0.1:0",
      ]);
      assert.notEqual(refused.status, 0);
      assert.match(refused.stderr, /in use by another skein serve \(one node per schema\)/);
      // The database ends the first node's lease session (as a restart of PostgreSQL or a
      // broken network would): the node stops rather than run beside the next holder.
      const holder = await client.query<{ pid: number }>(
        `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
           AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
        [`skein.node.${schema}`],
      );
      assert.equal(holder.rows.length, 1);
      await client.query("SELECT pg_terminate_backend($1)", [holder.rows[0]!.pid]);
      const exit = await first.exited;
      assert.equal(exit.code, 70, first.stderr());
      assert.match(first.stdout() + first.stderr(), /node lease was lost/);
    } finally {
      await first.stop("SIGKILL");
    }
    // The lease is free again: a new server starts on the schema.
    const next = await startServe(config);
    assert.equal((await next.stop()).code, 0);
  });
});
