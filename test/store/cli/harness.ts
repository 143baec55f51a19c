/**
 * Helpers for the store command tests: temporary trees, a snapshot of everything under a
 * directory (to prove a refusal created nothing), in-process runs of one command with
 * captured output, and real `skein-store` processes.
 */

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { chmod, lstat, mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { fileURLToPath } from "node:url";
import { type Command, runProgram } from "../../../src/common/cli.ts";

export const BIN = fileURLToPath(new URL("../../../bin/skein-store.ts", import.meta.url));

/** A temp folder for the whole test file: made now, removed after the file's tests. */
export function tempRoot(prefix: string): string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  after(() => rm(root, { recursive: true, force: true }));
  return root;
}

/** The small-store settings most tests serve with. */
export const STORE_CORE = {
  branch_cache_bytes_per_shard: 1048576,
  max_frame: 1048576,
  max_clients: 8,
  max_page: 100,
  timeout_ms: 5000,
};
export const STORE_CREATE = { shards: 2, cache_bytes_total: 8388608, executor_threads: 1 };

/**
 * Lays out a store service under `dir`: a private runtime folder `run` (the socket's
 * XDG_RUNTIME_DIR), `data/`, and `service.json` serving `data/store` with the core settings,
 * `create` and `settings` on top. Returns the runtime folder and the service file.
 */
export async function serviceFolder(
  dir: string,
  settings: Record<string, unknown>,
): Promise<{ run: string; file: string }> {
  const run = join(dir, "run");
  await mkdir(run, { recursive: true });
  await chmod(run, 0o700);
  await mkdir(join(dir, "data"));
  const file = join(dir, "service.json");
  const service = { data_dir: join(dir, "data", "store"), ...STORE_CORE, create: STORE_CREATE };
  await writeFile(file, JSON.stringify({ ...service, ...settings }));
  return { run, file };
}

/** Every path under `root` with its type and mode, sorted. */
export async function snapshot(root: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string): Promise<void> {
    let entries: string[];
    try {
      entries = await readdir(dir);
    } catch {
      return;
    }
    for (const name of entries) {
      const path = join(dir, name);
      const info = await lstat(path);
      out.push(`${path} ${info.mode.toString(8)}`);
      if (info.isDirectory()) await walk(path);
    }
  }
  await walk(root);
  return out.sort();
}

export async function runCommand(command: Command, args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const program = { name: "skein-store", version: "0", summary: "test", commands: [command] };
  const status = await runProgram(program, [command.name, ...args], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
  });
  return { status, out: out.join(""), err: err.join("") };
}

/** Checks the refusal contract: status 2 and one stderr line carrying code and field. */
export function assertRefusal(
  r: { status: number; err: string },
  command: string,
  code: string,
  text?: string,
): void {
  assert.equal(r.status, 2, r.err);
  const lines = r.err.trimEnd().split("\n");
  assert.equal(lines.length, 1, r.err);
  assert.ok(lines[0]!.startsWith(`skein-store ${command}: ${code}: `), lines[0]);
  if (text !== undefined) assert.ok(lines[0]!.includes(text), `${lines[0]} ⟂ ${text}`);
}

export interface Running {
  readonly child: ChildProcess;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Processes started here and still running, killed once the file's tests are done (a
 * failed test's too, so it cannot keep the file from ending). */
const started = new Set<ChildProcess>();
after(() => {
  for (const child of started) child.kill("SIGKILL");
});

export function start(args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.add(child);
  child.once("exit", () => started.delete(child));
  let err = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    err += d;
  });
  child.stdout!.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once("exit", (code, signal) => done({ code, signal })),
  );
  return { child, stderr: () => err, exited };
}

/** Waits until `predicate` holds or the process exits; fails after a generous bound. */
export async function waitFor(
  running: Running,
  predicate: () => boolean | Promise<boolean>,
  what: string,
): Promise<void> {
  let gone = false;
  void running.exited.then(() => {
    gone = true;
  });
  for (let i = 0; i < 600; i++) {
    if (await predicate()) return;
    if (gone) assert.fail(`process exited before ${what}: ${running.stderr()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  running.child.kill("SIGKILL");
  assert.fail(`timed out waiting for ${what}: ${running.stderr()}`);
}

/** Runs a command to completion in a real process. */
export async function runToEnd(args: string[], env: Record<string, string>) {
  const running = start(args, env);
  const { code } = await running.exited;
  return { status: code ?? -1, err: running.stderr() };
}
