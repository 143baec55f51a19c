import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { QueryService } from "../../../src/store/query/service.ts";
import { servedStore } from "../transport/fixture.ts";
import { refused, settings } from "./fixture.ts";

describe("the start-up probe names each failure and other verbs stay served", async () => {
  const dir = await mkdtemp(join(tmpdir(), "skein-probe-"));
  after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, "a-dir"));
  await writeFile(join(dir, "plain"), "#!/bin/sh\nexit 0\n");
  await writeFile(join(dir, "liar"), "#!/bin/sh\nprintf 'nonsense'\nsleep 5\n");
  await chmod(join(dir, "liar"), 0o755);
  await writeFile(join(dir, "quits"), "#!/bin/sh\nexit 3\n");
  await chmod(join(dir, "quits"), 0o755);

  const cases: [string, string][] = [
    ["missing", "query_worker_missing"],
    ["a-dir", "query_worker_not_file"],
    ["plain", "query_worker_not_executable"],
    ["liar", "query_worker_probe_failed"],
    ["quits", "query_worker_probe_failed"],
  ];
  for (const [file, code] of cases) {
    test(`${file}: ${code}`, async () => {
      const queries = await QueryService.start(settings({ query_worker: join(dir, file) }));
      after(() => queries.close());
      assert.equal(queries.failure?.code, code);
      const served = await servedStore({ queries });
      const client = await served.connect();
      await client.call("collections.create", { collection: "c" });
      await client.put("c", [{ key: "k", value: 1 }]);
      assert.equal((await client.get("c", "k")).value, 1);
      await refused(client.call("query.run", { collection: "c", code: "(r) => 1" }), code);
      await refused(client.call("query.run", { collection: "c", code: "(r) => 1" }), code);
    });
  }
});
