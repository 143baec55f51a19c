import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { servedStore } from "../transport/fixture.ts";

const bin = fileURLToPath(new URL("../../../bin/skein-store.ts", import.meta.url));

/** Runs the real CLI in a child process (async: the store answers from this process). */
function cli(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { encoding: "utf8" }, (error, stdout, stderr) => {
      const status = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      resolve({ status, stdout, stderr });
    });
  });
}

describe("skein-store client commands (real processes, real socket)", async () => {
  const served = await servedStore();
  const s = ["--socket", served.socketPath];

  test("call VERB JSON prints the result as JSON", async () => {
    const created = await cli(["call", ...s, "collections.create", '{"collection":"cli"}']);
    assert.equal(created.status, 0, created.stderr);
    assert.equal(JSON.parse(created.stdout).collection, "cli");
    const put = await cli([
      "call",
      ...s,
      "document.put",
      '{"collection":"cli","key":"a","value":{"x":1}}',
    ]);
    assert.equal(put.status, 0, put.stderr);
    assert.equal(JSON.parse(put.stdout).author, "skein-store-cli");
    const got = await cli(["call", ...s, "document.get", '{"collection":"cli","key":"a"}']);
    assert.deepEqual(JSON.parse(got.stdout).value, { x: 1 });
  });

  test("a value with own __proto__ keys is put and printed back as given", async () => {
    const value = '{"__proto__":{"polluted":1},"a":[{"__proto__":null}]}';
    const put = await cli(["put", ...s, "cli", "proto", value]);
    assert.equal(put.status, 0, put.stderr);
    const got = await cli(["call", ...s, "document.get", '{"collection":"cli","key":"proto"}']);
    assert.equal(got.status, 0, got.stderr);
    assert.equal(JSON.stringify(JSON.parse(got.stdout).value), value);
    await cli(["call", ...s, "document.delete", '{"collection":"cli","key":"proto"}']);
  });

  test("a refusal prints CODE: message and exits 1", async () => {
    const r = await cli(["call", ...s, "document.list", '{"collection":"cli","limit":100000}']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^skein-store: page_limit: /);
  });

  test("usage mistakes exit 2", async () => {
    assert.equal((await cli(["call", "document.get"])).status, 2);
    assert.equal((await cli(["call", ...s, "document.get", "{not json"])).status, 2);
  });

  test("subcommands for the common verbs", async () => {
    assert.equal((await cli(["put", ...s, "cli", "b", '"two"'])).status, 0);
    assert.equal(JSON.parse((await cli(["get", ...s, "cli", "b"])).stdout).value, "two");
    const list = JSON.parse((await cli(["list", ...s, "cli", "--limit", "10"])).stdout);
    assert.deepEqual(
      list.rows.map((r: { key: string }) => r.key),
      ["a", "b"],
    );
    assert.equal((await cli(["branches", ...s, "cli", "create", "dev"])).status, 0);
    const branches = JSON.parse((await cli(["branches", ...s, "cli"])).stdout);
    assert.deepEqual(
      branches.rows.map((b: { name: string }) => b.name),
      ["dev", "main"],
    );
    const history = JSON.parse((await cli(["history", ...s, "cli"])).stdout);
    const oldest = history.rows.at(-1).version;
    const changes = JSON.parse(
      (await cli(["changes", ...s, "cli", "--from", String(oldest)])).stdout,
    );
    assert.deepEqual(changes.changes.map((c: { key: string }) => c.key).sort(), ["a", "b"]);
    assert.equal((await cli(["delete", ...s, "cli", "a"])).status, 0);
    const collections = JSON.parse((await cli(["collections", ...s])).stdout);
    assert.deepEqual(
      collections.rows.map((c: { name: string }) => c.name),
      ["cli"],
    );
  });

  test("an unreachable socket exits 1 with a one-line reason", async () => {
    const r = await cli(["call", "--socket", `${served.socketPath}.missing`, "collections.list"]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /cannot reach the store/);
  });

  // Last: it adds a collection the listing above does not expect.
  test("integers beyond 2^53 go in and come out exactly", async () => {
    await cli(["call", ...s, "collections.create", '{"collection":"wide"}']);
    const value = '{"max":18446744073709551615,"min":-9223372036854775808,"ms":1700000000123}';
    assert.equal((await cli(["put", ...s, "wide", "w", value])).status, 0);
    const got = await cli(["get", ...s, "wide", "w"]);
    assert.equal(got.status, 0, got.stderr);
    assert.match(got.stdout, /"max": 18446744073709551615,/);
    assert.match(got.stdout, /"min": -9223372036854775808,/);
    assert.match(got.stdout, /"ms": 1700000000123\n/);
  });
});
