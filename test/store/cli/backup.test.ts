// `skein-store backup`: a compacted online copy of a running store, taken while a client
// keeps committing (real store process, real CLI process, real socket), restored by serving
// the copy as a data directory. Every commit acknowledged before the backup began is in
// the copy; the copy is one consistent version (no record newer than the copy's version);
// a target that exists is refused, and so is one whose parent is missing, leaving nothing.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { access, chmod, mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { StoreClient } from "../../../src/store/client/client.ts";
import { until } from "../../support/until.ts";
import {
  BIN,
  type Running,
  STORE_CORE,
  STORE_CREATE,
  start,
  tempRoot,
  waitFor,
} from "./harness.ts";

const root = tempRoot("skein-backup-");

const CORE = { ...STORE_CORE, max_page: 1000, timeout_ms: 10000 };

async function serveFrom(name: string, dataDir: string, create: boolean) {
  const run = join(root, `${name}-run`);
  await mkdir(run, { recursive: true });
  await chmod(run, 0o700);
  const file = join(root, `${name}.json`);
  await writeFile(
    file,
    JSON.stringify({
      ...CORE,
      data_dir: dataDir,
      ...(create ? { create: STORE_CREATE } : {}),
    }),
  );
  const env = { XDG_RUNTIME_DIR: run, SKEIN_LOG_LEVEL: "info" };
  const running = start(["serve", file, ...(create ? ["--create"] : [])], env);
  await waitFor(running, () => running.stderr().includes('"store listening"'), "the store");
  const socket = join(run, "skein-store", `${name}.sock`);
  return { running, socket, env };
}

/** Runs `skein-store ARGS` to its end, with stdout. */
function cli(args: string[]): Promise<{ status: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  return new Promise((done) => child.on("exit", (status) => done({ status, out, err })));
}

async function stop(running: Running): Promise<void> {
  running.child.kill("SIGTERM");
  assert.equal((await running.exited).code, 0, running.stderr());
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe("skein-store backup (online, real processes)", () => {
  test("a backup taken under write load restores every commit acknowledged before it began", async () => {
    await mkdir(join(root, "live"));
    const live = await serveFrom("store", join(root, "live", "store"), true);
    const writer = await StoreClient.connect(live.socket, { client: "writer" });
    await writer.call("collections.create", { collection: "c" });
    const pad = "x".repeat(2000);
    let acked = 0;
    let writing = true;
    const load = (async () => {
      for (let i = 0; writing; i++) {
        await writer.put("c", [{ key: `k${String(i).padStart(6, "0")}`, value: { i, pad } }]);
        acked = i + 1;
      }
    })();
    // Some history first, so the copy has real content.
    await until("200 acknowledged writes", () => acked >= 200, { timeoutMs: 60_000 });
    const before = acked;
    const target = join(root, "copy");
    const backup = await cli(["backup", "--socket", live.socket, target]);
    const during = acked - before;
    writing = false;
    await load;
    assert.equal(backup.status, 0, backup.err);
    const answer = JSON.parse(backup.out) as { path: string; bytes: number };
    assert.equal(answer.path, target);
    assert.ok(answer.bytes > 0);
    assert.deepEqual((await readdir(target)).sort(), ["data.mdb", "skein-store.json"]);
    assert.ok(during >= 0);

    // Refusals, over the same socket: an existing target, a missing parent, a relative path.
    await assert.rejects(writer.call("store.backup", { path: target }), { code: "backup_exists" });
    const orphan = join(root, "no-such-parent", "copy");
    await assert.rejects(writer.call("store.backup", { path: orphan }), { code: "backup_failed" });
    assert.equal(await exists(orphan), false);
    await assert.rejects(writer.call("store.backup", { path: "rel" }), { code: "invalid_request" });
    await writer.close();
    await stop(live.running);

    // Restore: the copy is a data directory; serve it (no --create).
    const restored = await serveFrom("copy", target, false);
    const reader = await StoreClient.connect(restored.socket, { client: "reader" });
    const keys: string[] = [];
    let after: string | null = null;
    do {
      const page = (await reader.call("document.list", {
        collection: "c",
        limit: 200,
        ...(after === null ? {} : { after }),
      })) as { rows: { key: string }[]; next: string | null };
      for (const row of page.rows) keys.push(row.key);
      after = page.next;
    } while (after !== null);
    // One consistent version: a prefix of the writes, at least those acknowledged before it.
    assert.ok(keys.length >= before, `${keys.length} records, ${before} acknowledged before`);
    assert.ok(keys.length <= acked);
    for (const [i, key] of keys.entries()) assert.equal(key, `k${String(i).padStart(6, "0")}`);
    const last = await reader.get("c", keys.at(-1)!);
    assert.deepEqual(last.value, { i: keys.length - 1, pad });
    // The restored store takes new commits.
    await reader.put("c", [{ key: "after-restore", value: 1 }]);
    await reader.close();
    await stop(restored.running);
  });
});
