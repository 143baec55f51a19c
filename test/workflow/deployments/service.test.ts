// The deployments role over a real SQLite store and a supervisor launching real `skein
// worker` processes. The process interface is wrapped so the OS refuses every signal: the
// spec's "a stop failure is logged and the record is still deleted" row.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, test } from "node:test";
import { createLogger } from "../../../src/common/log.ts";
import { deploymentBody } from "../../../src/workflow/deployments/record.ts";
import { DeploymentService, EVERY_NAMESPACE } from "../../../src/workflow/deployments/service.ts";
import { SqliteWorkflowStore } from "../../../src/workflow/persistence/sqlite/store.ts";
import {
  type ChildHandle,
  type Launcher,
  processLauncher,
} from "../../../src/workflow/supervisor/launcher.ts";
import { Supervisor } from "../../../src/workflow/supervisor/supervisor.ts";
import { alive, workerFixture } from "./support.ts";

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

test("DELETE with a worker that cannot be stopped: the failure is logged and the record is deleted", async () => {
  const dir = await mkdtemp(join(tmpdir(), "skein-deploy-service-"));
  dirs.push(dir);
  const w = await workerFixture(dir);
  const lines: string[] = [];
  const logger = createLogger({
    name: "test",
    level: "info",
    pretty: false,
    destination: new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  });
  const children: ChildHandle[] = [];
  const refusing: Launcher = {
    async launch(target) {
      const child = await processLauncher.launch(target);
      children.push(child);
      return {
        pid: child.pid,
        exited: child.exited,
        signal: () => {
          throw Object.assign(new Error("kill EPERM"), { code: "EPERM" });
        },
      };
    },
  };
  const store = SqliteWorkflowStore.open(join(dir, "skein.db"));
  const service = new DeploymentService({
    store: store.deployments,
    supervisor: new Supervisor({
      launcher: refusing,
      logger,
      stopGraceMs: 200,
      backoff: { initialMs: 100, maxMs: 100 },
      stableMs: 10_000,
    }),
    nodeId: "n1",
    // Not `dir`: the worker's token file is there, and the data dir holds no credentials.
    dataDir: join(dir, "data"),
    logger,
  });
  try {
    const put = await service.put(
      "stuck",
      deploymentBody.run(w.record(), undefined),
      EVERY_NAMESPACE,
    );
    assert.equal(put.outcome, "created");
    const pid = put.process!.pid!;
    assert.equal(alive(pid), true);

    const removed = await service.delete("stuck", EVERY_NAMESPACE);
    assert.equal((removed.deployment as { name: string }).name, "stuck");
    assert.equal(await store.deployments.get("stuck"), undefined);
    const logged = lines
      .map((l) => JSON.parse(l))
      .find((l) => l.deployment === "stuck" && l.level === 50);
    assert.ok(logged, `an error line for the failed stop in ${lines.join("")}`);
    assert.match(logged.msg, /deleting the record anyway/);
    assert.equal(logged.err.code, "stop_failed");
    // The supervisor forgot it: nothing restarts it, and the managed view has no row.
    assert.deepEqual((await service.managed(EVERY_NAMESPACE)).managed, []);
    process.kill(pid, "SIGKILL");
    await children[0]!.exited;
  } finally {
    await w.endpoint.endpoint.close();
    await store.close();
  }
});
