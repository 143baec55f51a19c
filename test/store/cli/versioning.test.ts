// The review loop from the real CLI (child processes, a real socket): finding the store by
// --store NAME and SKEIN_STORE_SOCKET, values from stdin and files, --author and -m,
// diff between branches (text, colour, JSON), merge with conflicts, log, tag, revert.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { runProgram } from "../../../src/common/cli.ts";
import { storeProgram } from "../../../src/store/cli/program.ts";
import { startStoreServer } from "../../../src/store/transport/server.ts";
import { servedStore } from "../transport/fixture.ts";
import { BIN } from "./harness.ts";

const ESC = String.fromCharCode(27);

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

function cli(
  args: string[],
  options: { env?: Record<string, string>; input?: string } = {},
): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? "", ...options.env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdin.end(options.input ?? "");
    child.on("close", (status) => resolve({ status: status ?? 1, stdout, stderr }));
  });
}

/** The same program in this process (fast; stdout is no terminal, as in a pipe). */
async function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const saved = Object.keys(env).map((k) => [k, process.env[k]] as const);
  Object.assign(process.env, env);
  try {
    const status = await runProgram(storeProgram, args, {
      out: (t) => out.push(t),
      err: (t) => err.push(t),
    });
    return { status, stdout: out.join("\n"), stderr: err.join("\n") };
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

const json = (r: Run) => {
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Record<string, unknown>;
};

describe("the store CLI's versioning loop", async () => {
  const served = await servedStore();
  const s = ["--socket", served.socketPath];
  // The same store, also listening where `serve` puts a store named "loop" (no socket set).
  const xdg = mkdtempSync(join(tmpdir(), "skein-xdg-"));
  after(() => rmSync(xdg, { recursive: true, force: true }));
  mkdirSync(join(xdg, "skein-store"), { mode: 0o700 });
  const byName = await startStoreServer(served.store, {
    socketPath: join(xdg, "skein-store", "loop.sock"),
    maxFrame: 1 << 20,
    maxClients: 4,
    timeoutMs: 5000,
  });
  after(() => byName.close());

  test("--store NAME and SKEIN_STORE_SOCKET find the store; neither is a usage error", async () => {
    const viaName = await cli(["collections", "create", "loop", "--store", "loop"], {
      env: { XDG_RUNTIME_DIR: xdg },
    });
    assert.equal(json(viaName).collection, "loop");
    const viaEnv = await cli(["collections"], { env: { SKEIN_STORE_SOCKET: served.socketPath } });
    assert.deepEqual(
      (json(viaEnv).rows as { name: string }[]).map((r) => r.name),
      ["loop"],
    );
    const none = await cli(["collections"]);
    assert.equal(none.status, 2);
    assert.match(none.stderr, /--socket PATH, --store NAME or SKEIN_STORE_SOCKET/);
  });

  test("put from stdin and from a file, signed with --author and -m", async () => {
    const fromStdin = json(
      await cli(["put", ...s, "loop", "a", "-", "--author", "ana", "-m", "seed a"], {
        input: '{"n": 1, "tags": ["x"]}',
      }),
    );
    assert.equal(fromStdin.author, "ana");
    assert.equal(fromStdin.message, "seed a");
    const file = join(xdg, "value.json");
    writeFileSync(file, '{"n": 2}');
    json(await run(["put", ...s, "loop", "b", "--value-file", file]));
    const got = json(await run(["get", ...s, "loop", "b"]));
    assert.deepEqual(got.value, { n: 2 });
    const both = await run(["put", ...s, "loop", "c", "1", "--value-file", file]);
    assert.equal(both.status, 2);
  });

  test("branch, write, diff (text with colour, and JSON), merge with a conflict, log", async () => {
    json(await run(["branches", ...s, "loop", "create", "agent-7"]));
    json(await run(["put", ...s, "loop", "a", '{"n": 5, "tags": ["x"]}', "--branch", "agent-7"]));
    json(await run(["put", ...s, "loop", "new", '"hello"', "--branch", "agent-7"]));
    json(await run(["delete", ...s, "loop", "b", "--branch", "agent-7", "-m", "drop b"]));
    const text = await run(["diff", ...s, "loop", "main", "agent-7", "--output", "text"], {
      FORCE_COLOR: "1",
    });
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`${ESC}\\[32m\\+ new {2}hello`));
    assert.match(text.stdout, new RegExp(`${ESC}\\[31m- b `));
    assert.match(text.stdout, /~ a/);
    assert.match(text.stdout, /\.n: .*1.* → .*5/);
    assert.match(text.stdout, /3 changes: 1 added, 1 removed, 1 modified/);
    const plain = await run(["diff", ...s, "loop", "main", "agent-7", "--output", "text"]);
    assert.doesNotMatch(plain.stdout, new RegExp(`${ESC}\\[`), "no colour off a terminal");
    const diff = json(await run(["diff", ...s, "loop", "main", "agent-7"]));
    assert.equal((diff.changes as unknown[]).length, 3);

    json(await run(["put", ...s, "loop", "a", '{"n": 9}']));
    json(await run(["put", ...s, "loop", "main-only", "1"]));
    const keys = (r: Run) =>
      ((json(r).changes as { key: string }[]) ?? []).map((c) => c.key).sort();
    assert.deepEqual(keys(await run(["diff", ...s, "loop", "main", "agent-7"])), [
      "a",
      "b",
      "main-only",
      "new",
    ]);
    assert.deepEqual(
      keys(await run(["diff", ...s, "loop", "main", "agent-7", "--since-base"])),
      ["a", "b", "new"],
      "what agent-7 changed, not what main did since",
    );
    const refused = await run(["merge", ...s, "loop", "agent-7", "main", "--output", "text"]);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /^skein-store: merge_conflict: /);
    assert.match(refused.stdout, /conflicts \(1\):/);
    assert.match(refused.stdout, /KEY\s+BASE\s+OURS\s+THEIRS/);
    const merged = json(
      await run(["merge", ...s, "loop", "agent-7", "main", "--strategy", "theirs", "-m", "land"]),
    );
    assert.equal(merged.outcome, "merged");
    assert.equal((merged.receipt as { message: string }).message, "land");
    const log = await run(["log", ...s, "loop", "--output", "text", "--limit", "3"]);
    assert.equal(log.status, 0, log.stderr);
    assert.match(log.stdout, /VERSION\s+TIME\s+AUTHOR\s+MERGE\s+MESSAGE/);
    assert.match(log.stdout, /\d+\+\d+\s+land/);
  });

  test("tag create | list | delete, refs from the CLI, revert", async () => {
    json(await run(["tag", ...s, "loop", "create", "reviewed", "-m", "ok"]));
    const tags = json(await run(["tag", ...s, "loop"]));
    assert.deepEqual(
      (tags.rows as { name: string }[]).map((t) => t.name),
      ["reviewed"],
    );
    const table = await run(["tag", ...s, "loop", "list", "--output", "text"]);
    assert.match(table.stdout, /NAME/);
    assert.match(table.stdout, /reviewed/);
    json(await run(["put", ...s, "loop", "late", "1"]));
    assert.equal(
      json(await run(["get", ...s, "loop", "late", "--version", "reviewed"])).found,
      false,
    );
    const changes = json(await run(["changes", ...s, "loop", "--from", "reviewed"]));
    assert.deepEqual(
      (changes.changes as { key: string }[]).map((c) => c.key),
      ["late"],
    );
    const log = json(await run(["log", ...s, "loop", "--limit", "1"]));
    const last = (log.rows as { version: number }[])[0]!.version;
    const reverted = json(await run(["revert", ...s, "loop", String(last)]));
    assert.equal(reverted.outcome, "reverted");
    assert.equal(json(await run(["get", ...s, "loop", "late"])).found, false);
    json(await run(["tag", ...s, "loop", "delete", "reviewed"]));
    const gone = await run(["get", ...s, "loop", "a", "--version", "reviewed"]);
    assert.equal(gone.status, 1);
    assert.match(gone.stderr, /ref_not_found/);
  });
});
