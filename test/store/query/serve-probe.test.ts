/**
 * A failed start-up probe through `skein-store serve` itself (a real process, its service
 * file naming the worker): the named failure is logged at start, every query.run answers
 * it, and every other verb is served.
 */

import assert from "node:assert/strict";
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import { serve, tempRoot } from "../embed/fixture.ts";

const QUERY = {
  query_time_ms: 2000,
  query_memory_bytes: 32 << 20,
  query_outputs_per_record: 3,
  query_scan_records: 1000,
  query_max_running: 2,
};

const cases: [string, (dir: string) => Promise<string>, string][] = [
  ["a missing worker", async (dir) => join(dir, "missing"), "query_worker_missing"],
  [
    "a worker that fails its probe",
    async (dir) => {
      const path = join(dir, "quits");
      await writeFile(path, "#!/bin/sh\nexit 3\n");
      await chmod(path, 0o755);
      return path;
    },
    "query_worker_probe_failed",
  ],
];

for (const [name, worker, code] of cases) {
  test(`serve with ${name}: ${code} logged, queries refused, other verbs served`, async () => {
    const dir = await tempRoot();
    const served = await serve({ query_worker: await worker(dir), ...QUERY });
    try {
      const logged = served.logs().find((l) => l.code === code);
      assert.ok(logged, JSON.stringify(served.logs()));
      assert.equal(logged.level, 50, "logged as an error");
      assert.match(String(logged.msg), /^query worker: /);
      const client = await served.client();
      await client.call("collections.create", { collection: "c" });
      await client.put("c", [{ key: "k", value: { n: 1 } }]);
      assert.deepEqual((await client.get("c", "k")).value, { n: 1 });
      const listed = (await client.call("document.list", { collection: "c" })) as {
        rows: { key: string }[];
      };
      assert.deepEqual(
        listed.rows.map((r) => r.key),
        ["k"],
      );
      for (let i = 0; i < 2; i++) {
        await assert.rejects(
          client.call("query.run", { collection: "c", code: "(r) => 1" }),
          (error: unknown) => error instanceof SkeinError && error.code === code,
        );
      }
      // The store is still whole after the refusals.
      assert.deepEqual((await client.get("c", "k")).value, { n: 1 });
    } finally {
      await served.stop();
    }
  });
}
