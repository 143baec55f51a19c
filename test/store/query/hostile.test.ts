import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { until } from "../../support/until.ts";
import { records, refused, servedQueries } from "./fixture.ts";

interface Page {
  rows: { key: string; output: unknown }[];
}

/** Peak resident memory of a process, from /proc (Linux). */
function peakRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

describe("hostile queries against the shipped worker", async () => {
  const { client, queries } = await servedQueries({
    // Room for the memory bomb to reach its limit first on a loaded machine (it needs about
    // half a second of CPU); the time-limit cases simply run this long.
    query_time_ms: 3000n,
    query_memory_bytes: 32n << 20n,
    query_max_running: 1n,
  });
  await client.call("collections.create", { collection: "c" });
  await client.put("c", records(3));
  const run = (code: string) =>
    client.call("query.run", { collection: "c", code }) as Promise<Page>;
  const outputs = async (code: string) => (await run(code)).rows.map((r) => r.output);
  const stillWorks = async () => assert.deepEqual(await outputs("(r) => r.value.n"), [0, 1, 2]);

  test("no host capability is reachable", async () => {
    await refused(
      run(`() => this.constructor.constructor("return process")()`),
      "query_code_error",
    );
    const probes = ["require", "process", "fetch", "setTimeout", "console", "std", "os", "Deno"];
    const seen = await outputs(`() => [${probes.map((p) => `typeof ${p}`).join("+','+")}]`);
    assert.deepEqual(seen[0], probes.map(() => "undefined").join(","));
    await stillWorks();
  });

  test("import() and file reads go nowhere", async () => {
    // A dynamic import is a promise that never settles (no module loader, no job queue).
    assert.deepEqual(await outputs(`() => import("node:fs")`), [{}, {}, {}]);
    await refused(run(`() => std.loadFile("/etc/passwd")`), "query_code_error");
    await stillWorks();
  });

  test("prototype pollution stays inside one query's sandbox", async () => {
    const page = await run(
      `(r) => { Object.prototype.polluted = 1; Array.prototype.push = null; return JSON.parse('{"__proto__":{"polluted":2}}') }`,
    );
    assert.equal(page.rows.length, 3);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
    assert.deepEqual(await outputs("(r) => ({}).polluted === undefined"), [true, true, true]);
  });

  test("a memory bomb is query_memory_limit and the worker stays bounded", async () => {
    await refused(
      run(`() => { const a = []; for (;;) a.push("x".repeat(1e5) + a.length) }`),
      "query_memory_limit",
    );
    for (const pid of queries.workerPids) assert.ok(peakRssBytes(pid) < 400 << 20, "worker RSS");
    await stillWorks();
  });

  test("an endless loop is query_time_limit", async () => {
    await refused(run("() => { for (;;) {} }"), "query_time_limit");
    await stillWorks();
  });

  test("a long native operation (a big sort) is query_time_limit", async () => {
    const sort = `() => { for (;;) { const a = new Array(4e5); for (let i = 0; i < a.length; i++) a[i] = (i * 7919) % 400009; a.sort(); } }`;
    await refused(run(sort), "query_time_limit");
    await stillWorks();
  });

  test("an output flood is query_output_limit", async () => {
    await refused(run("() => new Array(1e6).fill(1)"), "query_output_limit");
    await stillWorks();
  });

  test("a worker SIGKILLed mid-query is query_worker_failed; the next query works", async () => {
    const pending = run("() => { for (;;) {} }");
    // One query runs at a time, so a second one refused query_busy means the first has been
    // admitted and has taken the pool's worker (or is starting the one it will use).
    await refused(run("(r) => r.value.n"), "query_busy");
    const pids = await until("the running query's worker", () =>
      queries.workerPids.length > 0 ? queries.workerPids : undefined,
    );
    for (const pid of pids) process.kill(pid, "SIGKILL");
    await refused(pending, "query_worker_failed");
    await stillWorks();
  });
});

describe("the store's kill at query_time_ms plus grace", async () => {
  // A worker that takes the query and then never answers: what a native operation the
  // interrupt cannot stop looks like from the store. It answers the probe's batch.
  const dir = await mkdtemp(join(tmpdir(), "skein-stall-"));
  after(() => rm(dir, { recursive: true, force: true }));
  const script = join(dir, "stall.mjs");
  await writeFile(
    script,
    `const frame = (m) => { const t = JSON.stringify(m); const b = Buffer.alloc(4 + Buffer.byteLength(t)); b.writeUInt32BE(Buffer.byteLength(t)); b.write(t, 4); process.stdout.write(b); };
let buf = Buffer.alloc(0); let stalled = false;
frame({ type: "ready", protocol: 1, worker: "stall" });
process.stdin.on("data", (c) => { buf = Buffer.concat([buf, c]);
  while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) { const n = buf.readUInt32BE(0); const m = JSON.parse(buf.toString("utf8", 4, 4 + n)); buf = buf.subarray(4 + n);
    if (m.type === "compile") frame({ type: "compiled", id: m.id });
    else if (m.type === "end") frame({ type: "ended", id: m.id });
    else if (m.records.some((r) => r.key === "b")) frame({ type: "outputs", id: m.id, rows: [[1, "b"], [1, 4]] });
    else if (m.records.some((r) => r.key === "stall")) stalled = true;
    else if (!stalled) frame({ type: "outputs", id: m.id, rows: m.records.map((r, i) => [i, r.value]) });
  } });`,
  );
  const worker = join(dir, "worker");
  await writeFile(worker, `#!/bin/sh\nexec "$SKEIN_QUERY_NODE" ${script}\n`);
  await chmod(worker, 0o755);
  const { client } = await servedQueries({ query_worker: worker, query_time_ms: 300n });
  await client.call("collections.create", { collection: "c" });
  await client.put("c", [{ key: "x", value: 1 }]);

  test("a worker that stops answering is killed: query_time_limit, then a new worker", async () => {
    await client.put("c", [{ key: "stall", value: 2 }]);
    await refused(
      client.call("query.run", { collection: "c", code: "(r) => 1" }),
      "query_time_limit",
    );
    await client.call("document.delete", { collection: "c", key: "stall" });
    const page = (await client.call("query.run", { collection: "c", code: "(r) => 1" })) as Page;
    assert.deepEqual(page.rows, [{ key: "x", output: 1 }]);
  });
});
