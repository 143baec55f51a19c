// A deployment end to end through the server's own parts: the supervisor of the real
// `skein serve` launches a real `skein worker`, which connects to that server's gRPC worker
// endpoint and completes an activity of a workflow started over HTTP.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { until } from "../../support/until.ts";
import { ACTIVITIES, writeJson } from "../../support/worker-endpoint.ts";
import { adminToken, call, startServe, tempDir, writeConfig } from "../support/server.ts";

test("a running deployment serves its queue on the server's own worker endpoint", async (t) => {
  const dir = await tempDir();
  t.after(dir.remove);
  const server = await startServe(
    await writeConfig(dir.path, '[namespaces]\ndefault = "default"\n[deployments]\nenabled = true'),
  );
  t.after(() => server.stop());
  const token = await adminToken(dir.path);
  const tokenFile = join(dir.path, "worker.token");
  await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
  const document = await writeJson(dir.path, "worker.json", {
    name: "incrementer",
    task_queue: "q",
    actions: { inc: { module: ACTIVITIES, export: "inc" } },
  });
  const api = (method: string, path: string, body?: object) =>
    call(server.url, method, path, { token, ...(body === undefined ? {} : { body }) });

  const put = await api("PUT", "/worker-deployments/inc", {
    artifact: {
      type: "builtin",
      verb: ["worker", "module", document, "--endpoint", server.grpc!, "--token-file", tokenFile],
    },
    namespaces: ["default"],
    task_queue: "q",
    desired: "running",
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.equal(put.body.outcome, "created");

  const definition =
    "name: one\ntask_queue: q\nsteps:\n  - { id: a, call: { action: inc, input: \"{ 'n': input.n }\" } }\noutput: steps.a\n";
  const reg = await api("POST", "/workflows/definitions", { definition });
  assert.equal(reg.status, 200, JSON.stringify(reg.body));
  const start = await api("POST", "/workflows/start", { name: "one", input: { n: 41 } });
  assert.equal(start.status, 200, JSON.stringify(start.body));

  let last: unknown;
  const d = await until(
    () => `the run to complete: ${JSON.stringify(last)}`,
    async () => {
      const r = await api("POST", "/workflows/describe", { workflow_id: start.body.workflow_id });
      last = r.body;
      return r.body.run?.status === "Completed" ? r : undefined;
    },
  );
  assert.deepEqual(d.body.run.output, { n: 42 });

  const managed = await api("GET", "/workers/managed");
  assert.equal(managed.status, 200);
  const row = managed.body.managed.find((m: { name: string }) => m.name === "inc");
  assert.equal(row.state, "running");
  assert.equal(row.current_launch, true);
  assert.equal(typeof row.pid, "number");
});
