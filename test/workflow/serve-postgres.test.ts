import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { freshSchema, POSTGRES_URL, postgresRequired } from "../support/postgres.ts";
import { until } from "../support/until.ts";
import { freePort, moduleWorker } from "../support/worker-endpoint.ts";
import { adminToken, call, startServe, tempDir, writeConfig } from "./support/server.ts";

const URL = POSTGRES_URL;

describe("skein serve on PostgreSQL storage (real process)", {
  skip: await postgresRequired(),
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
      await until(
        () => `a first completion: ${worker.stderr()}`,
        async () => (await completed(first.url)).length >= 1,
      );
      await first.stop("SIGKILL");
      second = await startServe(config, grpc);
      const status = await until(
        () => `the run to end: ${worker.stderr()}`,
        async () => {
          const r = await call(second!.url, "POST", "/workflows/describe", { token, body });
          return r.body.run.status !== "Running" ? (r.body.run.status as string) : undefined;
        },
      );
      assert.equal(status, "Completed");
      assert.deepEqual(await completed(second.url), [1, 2, 3, 4]);
    } finally {
      await first.stop("SIGKILL");
      worker.kill();
      await worker.exited;
      await second?.stop();
    }
  });

  test("one process per node id: a second serve with the same cluster.node_id supersedes the first, which stops", async (t) => {
    const dir = await tempDir();
    t.after(() => dir.remove());
    const schema = freshSchema(t);
    const config = await writeConfig(
      dir.path,
      `[storage]\nurl = "${URL}"\nschema = "${schema}"\n[cluster]\nnode_id = "same"\n` +
        `lease_ttl_ms = 1000\n[namespaces]\ndefault = "home"`,
    );
    const first = await startServe(config);
    const second = await startServe(config);
    try {
      // The newer incarnation owns the id: the first node's next heartbeat finds it gone, and
      // it stops rather than serve beside it (its commits are fenced meanwhile).
      const exit = await first.exited;
      assert.equal(exit.code, 70, first.stderr());
      assert.match(first.stdout() + first.stderr(), /a newer incarnation joined the cluster/);
      const token = await adminToken(dir.path);
      const listed = await call(second.url, "GET", "/namespaces", { token });
      assert.equal(listed.status, 200);
    } finally {
      await first.stop("SIGKILL");
      assert.equal((await second.stop()).code, 0);
    }
  });
});
