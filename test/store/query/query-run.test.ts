import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { records, refused, servedQueries } from "./fixture.ts";

interface Page {
  rows: { key: string; output: unknown }[];
  next: string | null;
  scanned: number;
  version: number;
}

describe("query.run over a real socket with the shipped worker", async () => {
  const { client, queries } = await servedQueries({ query_scan_records: 120n });
  await client.call("collections.create", { collection: "c" });
  const put = (await client.put("c", records(200))) as { version: number };
  const run = (args: object) =>
    client.call("query.run", { collection: "c", ...args }) as Promise<Page>;

  test("the probe passed", () => assert.equal(queries.failure, null));

  test("a filter pages in key order, resumable with next", async () => {
    const code = "(r, a) => r.value.tag === a.tag ? r.value.n : undefined";
    const first = await run({ code, args: { tag: "even" }, limit: 10, prefix: "doc-00" });
    assert.deepEqual(
      first.rows.map((r) => r.output),
      [0, 2, 4, 6, 8, 10, 12, 14, 16, 18],
    );
    assert.equal(first.next, "doc-0018");
    assert.equal(first.scanned, 19);
    assert.equal(first.version, put.version);
    const second = await run({ code, args: { tag: "even" }, limit: 10, after: first.next });
    assert.equal(second.rows[0]!.key, "doc-0020");
  });

  test("arrays give several rows; a record's outputs are never split", async () => {
    const page = await run({ code: "(r) => [r.key, r.value.n]", limit: 3, prefix: "doc-000" });
    assert.equal(page.rows.length, 4);
    assert.equal(page.next, "doc-0001");
    const last = await run({ code: "(r) => r.value.n", prefix: "doc-019", limit: 50 });
    assert.equal(last.rows.length, 10);
    assert.equal(last.next, null);
  });

  test("keys and values of any text reach the code and come back intact", async () => {
    await client.call("collections.create", { collection: "text" });
    // In key order, as the page gives them; the last one is wider than its ASCII estimate.
    const texts = [
      { key: "clé-日本-😀", value: { s: "ünï 😀 ☃", n: [1.5, -2, 1e21] } },
      { key: 'quote"back\\slash', value: { s: "line\u2028sep" } },
      { key: "z-wide", value: "日本語".repeat(20_000) },
    ];
    await client.put("text", texts);
    const page = (await client.call("query.run", {
      collection: "text",
      code: "(r) => ({ key: r.key, value: r.value, length: JSON.stringify(r.value).length })",
    })) as Page;
    assert.deepEqual(
      page.rows.map((r) => r.output),
      texts.map((t) => ({ key: t.key, value: t.value, length: JSON.stringify(t.value).length })),
    );
  });

  test("query_scan_limit: a page that needs more records than query_scan_records", async () => {
    const error = await refused(run({ code: "() => undefined", limit: 10 }), "query_scan_limit");
    assert.match(error.message, /query_scan_records \(120\)/);
    // A range that ends within the budget is a complete answer.
    const page = await run({ code: "() => undefined", prefix: "doc-00" });
    assert.deepEqual([page.rows.length, page.next, page.scanned], [0, null, 100]);
  });

  test("query_output_limit: one record with more outputs than allowed", async () => {
    await refused(run({ code: "() => [1, 2, 3, 4]" }), "query_output_limit");
    const page = await run({ code: "(r) => r.key", limit: 1 });
    assert.equal(page.rows[0]!.key, "doc-0000");
  });

  test("the code's own failure is query_code_error, and nothing is left behind", async () => {
    await refused(run({ code: "(r) => { throw new Error('no') }" }), "query_code_error");
    await refused(run({ code: "not a function(" }), "query_code_error");
    await refused(run({ code: "42" }), "query_code_error");
    // An expression the worker's fast path takes, until a record makes it give the batch to
    // the sandbox: the TypeError is the sandbox's.
    const typeError = await refused(run({ code: "(r) => r.value.missing.x" }), "query_code_error");
    assert.match(typeError.message, /TypeError/);
    assert.equal((await run({ code: "(r) => 1", limit: 1 })).rows.length, 1);
  });

  test("limit above max_page is page_limit; an unknown collection is refused", async () => {
    await refused(run({ code: "(r) => 1", limit: 51 }), "page_limit");
    await refused(
      client.call("query.run", { collection: "nope", code: "(r) => 1" }),
      "collection_not_found",
    );
  });
});

describe("query_busy", async () => {
  const { client } = await servedQueries({ query_max_running: 1n, query_time_ms: 1500n });
  await client.call("collections.create", { collection: "c" });
  await client.put("c", records(5));

  test("a query beyond query_max_running is refused; the next one runs", async () => {
    const slow = client.call("query.run", { collection: "c", code: "() => { for(;;){} }" });
    await refused(client.call("query.run", { collection: "c", code: "(r) => 1" }), "query_busy");
    await refused(slow, "query_time_limit");
    const page = (await client.call("query.run", { collection: "c", code: "(r) => 1" })) as Page;
    assert.equal(page.rows.length, 5);
  });
});

describe("queries disabled", async () => {
  const { servedStore } = await import("../transport/fixture.ts");
  const served = await servedStore();
  const client = await served.connect();
  test("query.run without a query group is query_disabled", async () => {
    await refused(
      client.call("query.run", { collection: "c", code: "(r) => 1" }),
      "query_disabled",
    );
  });
});

describe("StoreClient.query and skein-store query", async () => {
  const { client, socketPath } = await servedQueries();
  await client.call("collections.create", { collection: "c" });
  await client.put("c", records(4));

  test("StoreClient.query runs one page", async () => {
    const page = await client.query("c", "(r, a) => r.value.n * a", { args: 10, limit: 2 });
    assert.deepEqual(page.rows, [
      { key: "doc-0000", output: 0 },
      { key: "doc-0001", output: 10 },
    ]);
    assert.equal(page.next, "doc-0001");
  });

  test("the CLI reads the code from a file or stdin and prints the page", async () => {
    const { execFile } = await import("node:child_process");
    const { writeFile, mkdtemp } = await import("node:fs/promises");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const bin = new URL("../../../bin/skein-store.ts", import.meta.url).pathname;
    const file = join(await mkdtemp(join(tmpdir(), "skein-q-")), "q.js");
    await writeFile(file, "(r, a) => r.value.tag === a ? r.key : undefined");
    const cli = (args: string[], input?: string) =>
      new Promise<{ stdout: string; stderr: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          [bin, "query", "--socket", socketPath, ...args],
          (_e, stdout, stderr) => resolve({ stdout, stderr }),
        );
        child.stdin!.end(input ?? "");
      });
    const fromFile = await cli(["c", "--code", file, "--args", '"odd"']);
    assert.deepEqual(JSON.parse(fromFile.stdout).rows, [
      { key: "doc-0001", output: "doc-0001" },
      { key: "doc-0003", output: "doc-0003" },
    ]);
    const fromStdin = await cli(["c", "--code", "-", "--limit", "1"], "(r) => r.value.n");
    assert.equal(JSON.parse(fromStdin.stdout).next, "doc-0000");
  });
});
