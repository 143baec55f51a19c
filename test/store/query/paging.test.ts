import assert from "node:assert/strict";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { records, servedQueries } from "./fixture.ts";

const PLAIN_WORKER = fileURLToPath(new URL("./support/plain-worker.mjs", import.meta.url));

interface Page {
  rows: { key: string; output: unknown }[];
  next: string | null;
  scanned: number;
}

/** A worker written from the docs alone that logs the size of every batch it is sent. */
async function loggingWorker() {
  const dir = await mkdtemp(join(tmpdir(), "skein-plain-worker-"));
  after(() => rm(dir, { recursive: true, force: true }));
  const log = join(dir, "batches.log");
  await writeFile(log, "");
  const path = join(dir, "worker");
  await writeFile(path, `#!/bin/sh\nexec "$SKEIN_QUERY_NODE" '${PLAIN_WORKER}' '${log}'\n`);
  await chmod(path, 0o755);
  const sent = async () =>
    (await readFile(log, "utf8"))
      .split("\n")
      .filter((line) => line !== "")
      .reduce((sum, line) => sum + Number(line), 0);
  return { path, sent };
}

describe("query.run with a worker written from the protocol docs", async () => {
  const worker = await loggingWorker();
  const { client } = await servedQueries({ query_worker: worker.path, query_scan_records: 1000n });
  await client.call("collections.create", { collection: "c" });
  await client.put("c", records(300));
  const run = (args: object) =>
    client.call("query.run", { collection: "c", code: "(r) => r.key", ...args }) as Promise<Page>;

  test("pages in key order, resumable with next", async () => {
    const first = await run({ limit: 5 });
    assert.deepEqual(
      first.rows.map((r) => r.output),
      ["doc-0000", "doc-0001", "doc-0002", "doc-0003", "doc-0004"],
    );
    assert.deepEqual([first.next, first.scanned], ["doc-0004", 5]);
    const second = await run({ limit: 5, after: first.next });
    assert.equal(second.rows[0]!.key, "doc-0005");
  });

  test("a page is not fed records beyond what it is expected to use", async () => {
    // Every record gives a row here, so a page of 20 rows needs 20 records: sending a full
    // batch ahead would make the worker run the query over records nobody reads.
    const before = await worker.sent();
    const page = await run({ limit: 20, prefix: "doc-01" });
    assert.equal(page.rows.length, 20);
    assert.equal(page.next, "doc-0119");
    assert.equal((await worker.sent()) - before, 20);
  });
});
