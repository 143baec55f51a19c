import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { writeJson } from "../../support/worker-endpoint.ts";
import { alive, type WorkerFixture, workerFixture } from "../deployments/support.ts";
import {
  adminToken,
  type ServerProcess,
  skein,
  startServe,
  tempDir,
  writeConfig,
} from "../support/server.ts";

describe("skein deployment put|get|list|desired|managed|delete against a running server", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess;
  let admin: string;
  let w: WorkerFixture;

  before(async () => {
    dir = await tempDir();
    server = await startServe(await writeConfig(dir.path, "[deployments]\nenabled = true"));
    admin = await adminToken(dir.path);
    w = await workerFixture(dir.path);
  });
  after(async () => {
    await server?.stop();
    await w?.endpoint.endpoint.close();
    await dir?.remove();
  });

  const run = (...args: string[]) => {
    const r = skein(["deployment", ...args, "--server", server.url, "--token", admin]);
    return { ...r, json: r.status === 0 ? JSON.parse(r.stdout) : undefined };
  };

  test("the whole life of a deployment from the command line", async () => {
    const file = await writeJson(dir.path, "record.json", w.record());
    const put = run("put", "cli/one", "--file", file);
    assert.equal(put.status, 0, put.stderr);
    assert.equal(put.json.outcome, "created");
    assert.equal(alive(put.json.process.pid), true);
    assert.equal(run("get", "cli/one").json.deployment.name, "cli/one");
    assert.deepEqual(
      run("list").json.deployments.map((d: { name: string }) => d.name),
      ["cli/one"],
    );
    const stopped = run("desired", "cli/one", "stopped");
    assert.equal(stopped.json.applied.state, "stopped");
    assert.equal(alive(put.json.process.pid), false);
    assert.equal(run("managed").json.managed[0].desired, "stopped");
    assert.equal(run("delete", "cli/one").json.existed, true);
    const missing = run("get", "cli/one");
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /deployment_not_found/);
  });

  test("usage mistakes exit 2: unknown verb, bad desired state, put without --file", () => {
    assert.equal(run("launch").status, 2);
    assert.equal(run("desired", "x", "paused").status, 2);
    assert.equal(run("put", "x").status, 2);
    assert.equal(run("put", "x", "--file", join(dir.path, "nope.json")).status, 1);
  });
});
