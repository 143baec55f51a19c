import assert from "node:assert/strict";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { QUERY_OUTPUT_DEPTH } from "../../../src/store/query/limits.ts";
import { records, refused, servedQueries } from "./fixture.ts";

const DEEP_WORKER = fileURLToPath(new URL("./support/deep-worker.mjs", import.meta.url));

interface Page {
  rows: { key: string; output: unknown }[];
}

/** Code whose output is objects nested `depth` levels deep around the number 1. */
const nested = (depth: number) =>
  `() => { let o = 1; for (let i = 0; i < ${depth}; i++) o = { a: o }; return o; }`;

/** The depth of an answered output, walked without recursion. */
function depthOf(value: unknown): number {
  let depth = 0;
  while (typeof value === "object" && value !== null) {
    depth++;
    value = (value as { a: unknown }).a;
  }
  return depth;
}

describe("query outputs nested deeper than QUERY_OUTPUT_DEPTH, shipped worker", async () => {
  const { client, queries } = await servedQueries({ query_max_running: 1n });
  await client.call("collections.create", { collection: "c" });
  await client.put("c", records(2));
  const run = (code: string) =>
    client.call("query.run", { collection: "c", code }) as Promise<Page>;

  test("100,000 levels, and 3,000 (past the reply encoder's stack), are query_output_limit in the same worker", async () => {
    assert.equal((await run("(r) => r.value.n")).rows.length, 2);
    const [pid] = queries.workerPids;
    for (const depth of [100_000, 3_000, QUERY_OUTPUT_DEPTH + 1]) {
      const error = await refused(run(nested(depth)), "query_output_limit");
      assert.match(error.message, new RegExp(`deeper than ${QUERY_OUTPUT_DEPTH} levels`));
      // Refused inside the sandbox: the worker was not lost and serves the next query.
      assert.deepEqual(queries.workerPids, [pid]);
    }
    assert.equal((await run("(r) => r.value.n")).rows.length, 2);
  });

  test("exactly QUERY_OUTPUT_DEPTH levels are answered whole", async () => {
    const page = await run(nested(QUERY_OUTPUT_DEPTH));
    assert.deepEqual(
      page.rows.map((row) => depthOf(row.output)),
      [QUERY_OUTPUT_DEPTH, QUERY_OUTPUT_DEPTH],
    );
  });

  test("depth is measured on what is serialized: toJSON and getters cannot hide it", async () => {
    const deep = nested(100_000);
    await refused(run(`() => ({ toJSON: ${deep} })`), "query_output_limit");
    await refused(run(`() => ({ get a() { return (${deep})(); } })`), "query_output_limit");
    // A query that replaces Array.prototype's index setters does not blind the measure.
    const trap = `Object.defineProperty(Array.prototype, "3", { set() {}, configurable: true })`;
    await refused(run(`() => { ${trap}; return (${deep})(); }`), "query_output_limit");
    assert.equal((await run("(r) => r.value.n")).rows.length, 2);
  });
});

describe("query outputs nested too deep by a worker that does not bound them (the store's check)", async () => {
  const dir = await mkdtemp(join(tmpdir(), "skein-deep-worker-"));
  after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, "worker");
  await writeFile(path, `#!/bin/sh\nexec "$SKEIN_QUERY_NODE" '${DEEP_WORKER}'\n`);
  await chmod(path, 0o755);
  const { client } = await servedQueries({ query_worker: path });
  await client.call("collections.create", { collection: "c" });
  await client.put("c", records(2));
  const run = (depth: number) =>
    client.call("query.run", {
      collection: "c",
      code: "() => 1",
      args: { depth },
    }) as Promise<Page>;

  test("the store refuses them itself, query_output_limit, and keeps answering", async () => {
    for (const depth of [100_000, QUERY_OUTPUT_DEPTH + 1]) {
      await refused(run(depth), "query_output_limit");
    }
    const page = await run(QUERY_OUTPUT_DEPTH);
    assert.deepEqual(
      page.rows.map((row) => depthOf(row.output)),
      [QUERY_OUTPUT_DEPTH, QUERY_OUTPUT_DEPTH],
    );
  });
});
