import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import pkg from "../../package.json" with { type: "json" };
import { type Command, parseOptions, runProgram } from "../../src/common/cli.ts";

const bin = (name: string) => fileURLToPath(new URL(`../../bin/${name}.ts`, import.meta.url));

function run(program: string, args: string[]) {
  return spawnSync(process.execPath, [bin(program), ...args], { encoding: "utf8" });
}

for (const program of ["skein", "skein-store"]) {
  describe(`${program} (real process)`, () => {
    test("--help lists the commands and exits 0", () => {
      const r = run(program, ["--help"]);
      assert.equal(r.status, 0);
      assert.match(r.stdout, new RegExp(`^${program} ${pkg.version}:`));
      assert.match(r.stdout, /Commands:/);
    });

    test("--version prints the package version", () => {
      const r = run(program, ["--version"]);
      assert.equal(r.status, 0);
      assert.equal(r.stdout.trim(), pkg.version);
    });

    for (const args of [["frobnicate"], ["--frobnicate"], []]) {
      test(`${JSON.stringify(args)} is a usage error: exit 2`, () => {
        const r = run(program, args);
        assert.equal(r.status, 2);
        if (args.length > 0) {
          assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
          assert.match(r.stderr, new RegExp(`^${program}: unknown`));
        }
      });
    }
  });
}

describe("subcommand options", () => {
  const echo: Command = {
    name: "echo",
    summary: "prints its argument",
    help: "TEXT [--loud]",
    async run(args, io) {
      const { values, positionals } = parseOptions(
        args,
        { loud: { type: "boolean" } },
        { min: 1, max: 1 },
      );
      io.out(values.loud ? positionals[0]!.toUpperCase() : positionals[0]!);
      return 0;
    },
  };
  const program = { name: "t", version: "1", summary: "test", commands: [echo] };

  async function call(args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const status = await runProgram(program, args, {
      out: (t) => out.push(t),
      err: (t) => err.push(t),
    });
    return { status, out: out.join(""), err: err.join("") };
  }

  test("known options and arguments run the command", async () => {
    assert.deepEqual(await call(["echo", "hi", "--loud"]), { status: 0, out: "HI", err: "" });
  });

  const refusals: [string[], RegExp][] = [
    [["echo", "hi", "--quiet"], /^t: Unknown option '--quiet'$/],
    [["echo"], /^t: expected at least 1 argument/],
    [["echo", "a", "b"], /^t: unexpected argument "b"$/],
  ];
  for (const [args, message] of refusals) {
    test(`${args.join(" ")} → exit 2, one line`, async () => {
      const r = await call(args);
      assert.equal(r.status, 2);
      assert.match(r.err, message);
    });
  }

  test("CMD --help prints the command's usage", async () => {
    const r = await call(["echo", "--help"]);
    assert.equal(r.status, 0);
    assert.equal(r.out, "Usage: t echo TEXT [--loud]");
  });
});
