import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, realpathSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
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
    // The time-limit cases run this long; the memory bomb has a store of its own (below).
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

  test("prototype pollution and mutated inputs stay inside one query's sandbox", async () => {
    const args = { limit: 5, tags: ["a"] };
    const call = (code: string) =>
      client.call("query.run", { collection: "c", code, args }) as Promise<Page>;
    const [pid] = queries.workerPids;
    // Block bodies: outside the fast path's grammar, so both queries run in QuickJS.
    const page = await call(`(r, args) => {
      globalThis.kept ??= JSON.parse;
      const out = kept('{"__proto__":{"polluted":2}}');
      Object.prototype.polluted = 1; Array.prototype.push = null; JSON.parse = null;
      r.value.n = 99; r.extra = 1; args.limit = 0; args.tags[0] = "changed"; args.seen = 1;
      Object.getPrototypeOf(r).viaRecord = 1; Object.getPrototypeOf(args).viaArgs = 1;
      out.n = r.value.n;
      return out;
    }`);
    assert.deepEqual(
      page.rows.map((r) => (r.output as { n: number }).n),
      [99, 99, 99],
    );
    // The store (this process) parsed outputs with an own __proto__ key: its objects are clean.
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
    // The next query, in the same worker process, sees pristine intrinsics and inputs.
    const seen = await call(`(r, args) => {
      const proto = Object.prototype, names = Object.getOwnPropertyNames(proto);
      return {
        polluted: "polluted" in {}, kept: typeof kept, viaRecord: "viaRecord" in {}, viaArgs: "viaArgs" in {},
        protoNames: names.filter((n) => !["constructor", "toString", "toLocaleString", "valueOf",
          "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable", "__proto__",
          "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__"].includes(n)),
        push: typeof Array.prototype.push, parse: typeof JSON.parse,
        n: r.value.n, extra: "extra" in r, args,
      };
    }`);
    assert.deepEqual(queries.workerPids, [pid], "the same worker process ran both queries");
    seen.rows.forEach((row, i) => {
      assert.deepEqual(row.output, {
        polluted: false,
        kept: "undefined",
        viaRecord: false,
        viaArgs: false,
        protoNames: [],
        push: "function",
        parse: "function",
        n: i,
        extra: false,
        args: { limit: 5, tags: ["a"] },
      });
    });
    // The stored records were never touched.
    assert.deepEqual((await client.get("c", "doc-0000")).value, { n: 0, tag: "even" });
    await stillWorks();
  });

  test("the worker runs under Node's permission model, reading only its own files", async () => {
    await stillWorks();
    const [pid] = queries.workerPids;
    // The live worker's command line (the launcher execs Node: this pid is Node itself).
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    assert.ok(argv.includes("--permission"), argv.join(" "));
    const root = realpathSync(fileURLToPath(new URL("../../../", import.meta.url)));
    const reads = argv.filter((a) => a.startsWith("--allow-fs-read="));
    assert.ok(reads.length > 0);
    for (const flag of reads) {
      const path = flag.slice("--allow-fs-read=".length);
      assert.ok(path.startsWith(`${root}/`) && !path.includes("*"), flag);
    }
    const granted = argv.filter((a) =>
      /^--allow-(fs-write|child-process|worker|addons|wasi)/.test(a),
    );
    assert.deepEqual(granted, []);
    // The same flags with a probe in place of the worker's entry: what the worker could do
    // outside its sandbox, were QuickJS escaped.
    const dir = await mkdtemp(join(tmpdir(), "skein-perm-"));
    try {
      const secret = join(dir, "secret");
      await writeFile(secret, "x");
      const entry = argv.at(-1)!;
      const code = `import fs from "node:fs"; import cp from "node:child_process";
        const tryIt = (f) => { try { f(); return "allowed"; } catch (e) { return e.code; } };
        console.log(JSON.stringify({
          passwd: tryIt(() => fs.readFileSync("/etc/passwd")),
          secret: tryIt(() => fs.readFileSync(${JSON.stringify(secret)})),
          write: tryIt(() => fs.writeFileSync(${JSON.stringify(join(dir, "w"))}, "x")),
          spawn: tryIt(() => cp.execFileSync("true")),
          own: tryIt(() => fs.readFileSync(${JSON.stringify(entry)})),
        }));`;
      const probe = spawnSync(argv[0]!, [...argv.slice(1, -1), "--input-type=module", "-e", code], {
        encoding: "utf8",
      });
      assert.deepEqual(
        JSON.parse(probe.stdout),
        {
          passwd: "ERR_ACCESS_DENIED",
          secret: "ERR_ACCESS_DENIED",
          write: "ERR_ACCESS_DENIED",
          spawn: "ERR_ACCESS_DENIED",
          own: "allowed",
        },
        probe.stderr,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
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

  test("stack overflows are query_code_error, and the worker lives on", async () => {
    const [pid] = queries.workerPids;
    const deep = `[${"[".repeat(100_000)}${"]".repeat(100_000)}]`;
    const cases = [
      // Stopped by QuickJS's own stack limit, inside the sandbox.
      [`(r) => { const f = (n) => f(n + 1) + 1; return f(0); }`, /stack overflow/],
      [`(r) => { const o = { get x() { return this.x; } }; return o.x; }`, /stack overflow/],
      [`(r) => JSON.parse("${"[".repeat(100_000)}")`, /stack overflow/],
      // Past it, on the worker's native stack: the module is replaced, the worker stays.
      [`(r) => ${deep}`, /nested too deeply/],
      [
        `(r) => { let o = {}; for (let i = 0; i < 100000; i++) o = { o }; return JSON.stringify(o).length; }`,
        /nested too deeply/,
      ],
    ] as const;
    for (const [code, message] of cases) {
      const error = await refused(run(code), "query_code_error");
      assert.match(error.message, message, code.slice(0, 80));
      await stillWorks();
    }
    assert.deepEqual(queries.workerPids, [pid], "the worker survived");
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

describe("a memory bomb is refused by the memory limit, long before the time limit", async () => {
  // query_time_ms far above what the bomb needs (about half a second of CPU): a refusal
  // that came from the clock would take this long.
  const TIME_MS = 20_000;
  const { client, queries } = await servedQueries({
    query_time_ms: BigInt(TIME_MS),
    query_memory_bytes: 32n << 20n,
    query_max_running: 1n,
  });
  await client.call("collections.create", { collection: "c" });
  await client.put("c", records(3));

  test("query_memory_limit, well under query_time_ms, and the worker stays bounded", async (t) => {
    const started = performance.now();
    const error = await refused(
      client.call("query.run", {
        collection: "c",
        code: `() => { const a = []; for (;;) a.push("x".repeat(1e5) + a.length) }`,
      }),
      "query_memory_limit",
    );
    const elapsed = performance.now() - started;
    t.diagnostic(`memory bomb refused after ${Math.round(elapsed)} ms`);
    assert.ok(elapsed < TIME_MS / 2, `refused after ${Math.round(elapsed)} ms: ${error.message}`);
    for (const pid of queries.workerPids) assert.ok(peakRssBytes(pid) < 400 << 20, "worker RSS");
    const page = (await client.call("query.run", {
      collection: "c",
      code: "(r) => r.value.n",
    })) as Page;
    assert.deepEqual(
      page.rows.map((r) => r.output),
      [0, 1, 2],
    );
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
