import assert from "node:assert/strict";
import { access, chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { UNIX_SOCKET_PATH_MAX_BYTES } from "../../../src/store/config/limits.ts";
import { STORE_MANIFEST } from "../../../src/store/startup/data-dir.ts";
import { runToEnd, start, waitFor } from "./harness.ts";

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), "skein-life-"));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

const CORE = {
  branch_cache_bytes_per_shard: 1048576,
  max_frame: 1048576,
  max_clients: 8,
  max_page: 100,
  timeout_ms: 5000,
  create: { shards: 2, cache_bytes_total: 8388608, executor_threads: 1 },
};

async function setup(name: string, extra: Record<string, unknown> = {}) {
  const dir = join(root, name);
  const run = join(dir, "run");
  await mkdir(run, { recursive: true });
  await chmod(run, 0o700);
  const dataDir = join(dir, "data", "store");
  await mkdir(join(dir, "data"));
  const file = join(dir, "service.json");
  await writeFile(file, JSON.stringify({ ...CORE, data_dir: dataDir, ...extra }));
  const env = { XDG_RUNTIME_DIR: run, SKEIN_LOG_LEVEL: "info" };
  return { dir, run, dataDir, file, env, socket: join(run, "skein-store", "store.sock") };
}

/**
 * True once a connection is accepted; otherwise the error's code, for the failure message.
 * (The socket file appears at bind, a moment before listen: wait on this, not on the file.)
 */
function connects(path: string): Promise<true | string> {
  return new Promise((done) => {
    const c = connect(path);
    c.once("connect", () => {
      c.destroy();
      done(true);
    });
    c.once("error", (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
  });
}

describe("skein-store serve (real processes)", () => {
  test("--create, stop, serve again; a second --create is refused; the name is held", async () => {
    const s = await setup("fresh");
    const first = start(["serve", s.file, "--create"], s.env);
    await waitFor(first, async () => (await connects(s.socket)) === true, "the socket");
    assert.equal((await stat(s.socket)).mode & 0o777, 0o600);
    assert.equal((await stat(join(s.run, "skein-store"))).mode & 0o777, 0o700);
    assert.equal((await stat(s.dataDir)).mode & 0o777, 0o700);
    const manifest = JSON.parse(await readFile(join(s.dataDir, STORE_MANIFEST), "utf8"));
    assert.equal(manifest.format, "skein-store");
    assert.equal(manifest.shards, "2");

    const again = await runToEnd(["serve", s.file], s.env);
    assert.equal(again.status, 2);
    assert.match(
      again.err.trim(),
      /^skein-store serve: store_name_in_use: name: store name "store"/,
    );

    first.child.kill("SIGTERM");
    assert.deepEqual(await first.exited, { code: 0, signal: null });
    assert.equal(await exists(s.socket), false, "the socket is removed on stop");
    assert.equal(await exists(join(s.run, "skein-store", "store.lock")), false);

    const recreate = await runToEnd(["serve", s.file, "--create"], s.env);
    assert.equal(recreate.status, 2);
    assert.match(
      recreate.err.trim(),
      /^skein-store serve: invalid_data_dir: data_dir: .* already exists/,
    );

    const second = start(["serve", s.file], s.env);
    await waitFor(second, async () => (await connects(s.socket)) === true, "the socket on reopen");
    second.child.kill("SIGINT");
    assert.deepEqual(await second.exited, { code: 0, signal: null });
    assert.equal(await exists(s.socket), false);
  });

  test("a crashed server's socket and lock are taken over", async () => {
    const s = await setup("crash");
    const first = start(["serve", s.file, "--create"], s.env);
    await waitFor(first, () => exists(s.socket), "the socket");
    first.child.kill("SIGKILL");
    await first.exited;
    assert.ok(await exists(s.socket), "a killed server leaves its socket");
    const second = start(["serve", s.file], s.env);
    await waitFor(second, async () => (await connects(s.socket)) === true, "the new listener");
    second.child.kill("SIGTERM");
    assert.equal((await second.exited).code, 0);
  });

  test("a configured socket and name; the name is refused to a second store", async () => {
    const s = await setup("named", {});
    const sockDir = join(s.dir, "sock");
    await mkdir(sockDir, { mode: 0o700 });
    await chmod(sockDir, 0o700);
    const socket = join(sockDir, "a.sock");
    await writeFile(
      s.file,
      JSON.stringify({ ...CORE, data_dir: s.dataDir, socket, name: "shared-name" }),
    );
    const first = start(["serve", s.file, "--create"], s.env);
    await waitFor(first, () => exists(socket), "the configured socket");

    const otherFile = join(s.dir, "other.json");
    await writeFile(
      otherFile,
      JSON.stringify({
        ...CORE,
        data_dir: join(s.dir, "data", "other"),
        socket: join(sockDir, "b.sock"),
        name: "shared-name",
      }),
    );
    const other = await runToEnd(["serve", otherFile, "--create"], s.env);
    assert.equal(other.status, 2);
    assert.match(other.err.trim(), /^skein-store serve: store_name_in_use: name: /);
    assert.equal(await exists(join(s.dir, "data", "other")), false, "nothing created");

    first.child.kill("SIGTERM");
    assert.equal((await first.exited).code, 0);
    assert.equal(await exists(socket), false);
  });

  test("a socket path of exactly the Unix socket address limit listens", async () => {
    const s = await setup("limit");
    const sockDir = join(s.dir, "sock");
    await mkdir(sockDir, { mode: 0o700 });
    await chmod(sockDir, 0o700);
    const socket = join(sockDir, "s".repeat(UNIX_SOCKET_PATH_MAX_BYTES - sockDir.length - 1));
    assert.equal(Buffer.byteLength(socket), UNIX_SOCKET_PATH_MAX_BYTES);
    await writeFile(s.file, JSON.stringify({ ...CORE, data_dir: s.dataDir, socket }));
    const first = start(["serve", s.file, "--create"], s.env);
    await waitFor(first, async () => (await connects(socket)) === true, "the socket at the limit");
    first.child.kill("SIGTERM");
    assert.equal((await first.exited).code, 0);
  });

  test("without XDG_RUNTIME_DIR the per-user runtime directory is created with mode 0700", async () => {
    const s = await setup("no-xdg");
    const temp = join(s.dir, "tmp");
    await mkdir(temp);
    const env = { XDG_RUNTIME_DIR: "", TMPDIR: temp, SKEIN_LOG_LEVEL: "info" };
    const runtime = join(temp, `skein-store-${process.getuid?.()}`);
    const socket = join(runtime, "store.sock");
    const first = start(["serve", s.file, "--create"], env);
    await waitFor(first, () => exists(socket), "the socket in the per-user directory");
    assert.equal((await stat(runtime)).mode & 0o777, 0o700);
    first.child.kill("SIGTERM");
    assert.equal((await first.exited).code, 0);
  });
});

describe("skein-store serve with the engine (real processes, real socket)", () => {
  async function client(args: string[], env: Record<string, string>) {
    const { spawn } = await import("node:child_process");
    const { BIN } = await import("./harness.ts");
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d;
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d;
    });
    const code = await new Promise<number | null>((done) => child.on("close", done));
    assert.equal(code, 0, err);
    return out;
  }

  test("a record written through serve's socket is there after a restart", async () => {
    const s = await setup("engine");
    const first = start(["serve", s.file, "--create"], s.env);
    await waitFor(first, async () => (await connects(s.socket)) === true, "the socket");
    await client(["collections", "--socket", s.socket, "create", "notes"], s.env);
    await client(["put", "--socket", s.socket, "notes", "n1", '{"text":"hello"}'], s.env);
    first.child.kill("SIGTERM");
    assert.deepEqual(await first.exited, { code: 0, signal: null });

    const second = start(["serve", s.file], s.env);
    await waitFor(second, async () => (await connects(s.socket)) === true, "the socket");
    const got = JSON.parse(await client(["get", "--socket", s.socket, "notes", "n1"], s.env));
    assert.equal(got.found, true);
    assert.deepEqual(got.value, { text: "hello" });
    second.child.kill("SIGTERM");
    assert.deepEqual(await second.exited, { code: 0, signal: null });
  });
});
