// `skein-store` prints readable tables on a terminal and JSON anywhere else, unless
// --output says which. The real CLI runs on a pseudo-terminal (util-linux `script`) and on a
// pipe against a real socket; the decision itself is checked directly as well.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { test } from "node:test";
import { type Io, UsageError } from "../../../src/common/cli.ts";
import { textOutput } from "../../../src/store/cli/output.ts";
import { servedStore } from "../transport/fixture.ts";
import { BIN } from "./harness.ts";

const io = (tty: boolean): Io => ({ out: () => {}, err: () => {}, tty });

test("the decision: text on a terminal, JSON otherwise, --output overrides both", () => {
  assert.equal(textOutput({}, io(true)), true);
  assert.equal(textOutput({}, io(false)), false);
  assert.equal(textOutput({}, { out: () => {}, err: () => {} }), false, "unknown is no terminal");
  for (const tty of [true, false]) {
    assert.equal(textOutput({ output: "text" }, io(tty)), true);
    assert.equal(textOutput({ output: "json" }, io(tty)), false);
    assert.throws(() => textOutput({ output: "yaml" }, io(tty)), UsageError);
  }
});

/** Runs the CLI; on a pseudo-terminal when `tty` (its CR LF line ends made LF). */
function cli(args: string[], tty: boolean): Promise<{ status: number; stdout: string }> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`);
  const [file, argv] = tty
    ? ["script", ["-qec", quoted.join(" "), "/dev/null"]]
    : [process.execPath, [BIN, ...args]];
  return new Promise((resolve) => {
    const child = spawn(file, argv, {
      stdio: ["ignore", "pipe", "inherit"],
      env: { PATH: process.env.PATH ?? "" },
    });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.on("close", (status) =>
      resolve({ status: status ?? 1, stdout: stdout.replaceAll("\r\n", "\n") }),
    );
  });
}

const hasScript = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;

test("the real CLI: a table on a pseudo-terminal, JSON on a pipe", {
  skip: hasScript ? false : "util-linux `script` is not installed",
}, async () => {
  const served = await servedStore();
  const client = await served.connect();
  await client.call("collections.create", { collection: "t" });
  await client.put("t", [
    { key: "k1", value: { a: 1 } },
    { key: "k2", value: "two" },
  ]);
  const list = ["list", "--socket", served.socketPath, "t"];
  const table = await cli(list, true);
  assert.equal(table.status, 0, table.stdout);
  assert.match(table.stdout, /^rows:\nKEY {2}VALUE\nk1 {3}\{ "a": 1 \}\nk2 {3}two\n/);
  assert.throws(() => JSON.parse(table.stdout));
  const piped = await cli(list, false);
  assert.equal(piped.status, 0);
  assert.deepEqual((JSON.parse(piped.stdout) as { rows: unknown[] }).rows, [
    { key: "k1", value: { a: 1 } },
    { key: "k2", value: "two" },
  ]);
  // --output wins either way.
  const forcedJson = await cli([...list, "--output", "json"], true);
  assert.deepEqual(JSON.parse(forcedJson.stdout), JSON.parse(piped.stdout));
  assert.equal((await cli([...list, "--output", "text"], false)).stdout, table.stdout);
});
