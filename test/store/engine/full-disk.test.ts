/**
 * The store on a full disk, for real: its data directory is on a small tmpfs mounted for
 * the test (this needs root). Filling the file system makes commits fail with
 * `internal_error`; reads keep answering; freeing space lets commits succeed again; after
 * a restart every acknowledged commit is there. Where the mount is impossible the test is
 * skipped locally and fails under CI=true (CI runs as root on this kind of machine).
 */

import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { SkeinError } from "../../../src/common/errors.ts";
import { StoreClient } from "../../../src/store/client/client.ts";
import { createStore, openStore } from "../../../src/store/engine/index.ts";
import { engineOptions } from "./fixture.ts";

const entry = fileURLToPath(new URL("../serve-entry.ts", import.meta.url));
/** Room for the store's first commits; small enough to fill in a moment. */
const FS_SIZE = "16m";

function mountSmallFs(): { mnt: string; parent: string } | string {
  const parent = mkdtempSync(join(tmpdir(), "skein-full-"));
  const mnt = join(parent, "mnt");
  mkdirSync(mnt);
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${FS_SIZE}`, "tmpfs", mnt], {
      stdio: "pipe",
    });
  } catch (error) {
    rmSync(parent, { recursive: true, force: true });
    return `cannot mount a tmpfs: ${(error as Error).message}`;
  }
  after(() => {
    execFileSync("umount", ["-l", mnt]);
    rmSync(parent, { recursive: true, force: true });
  });
  return { mnt, parent };
}

/** The mounted file system, or why there is none (fails under CI, skips elsewhere). */
function mountOrSkip(t: { skip(message: string): void }) {
  const mounted = mountSmallFs();
  if (typeof mounted === "string") {
    if (process.env.CI === "true") assert.fail(mounted);
    t.skip(mounted);
    return undefined;
  }
  return mounted;
}

async function startChild(dir: string, socketPath: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [entry, dir, socketPath], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stderr!.on("data", (c: Buffer) => process.env.SHOW_CHILD && process.stderr.write(c));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`store child exited with ${code}`)));
  });
  return child;
}

/** Writes a file until the file system refuses more (ENOSPC). */
function fill(path: string): void {
  const fd = openSync(path, "w");
  const block = Buffer.alloc(256 << 10, 1);
  try {
    for (;;) writeSync(fd, block);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    closeSync(fd);
  }
}

/** A value too large for LMDB's free pages: it needs new pages at the end of the file. */
const big = (n: number) => ({ n, pad: randomBytes(384 << 10).toString("base64") });

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => "accepted",
    (error: unknown) => (error instanceof SkeinError ? error.code : String(error)),
  );

test("a full disk: commits refused with internal_error, reads served, recovery when space returns, nothing acknowledged lost", async (t) => {
  const mounted = mountOrSkip(t);
  if (mounted === undefined) return;
  const dir = join(mounted.mnt, "data");
  const socketPath = join(mounted.parent, "s.sock");
  let child = await startChild(dir, socketPath);
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  after(() => child.kill("SIGKILL"));
  let client = await StoreClient.connect(socketPath, { client: "full" });
  await client.call("collections.create", { collection: "c" });
  const acknowledged = new Map<string, number>();
  const put = async (key: string, n: number) => {
    await client.put("c", [{ key, value: big(n) }]);
    acknowledged.set(key, n);
  };
  await put("before-0", 0);
  await put("before-1", 1);

  fill(join(mounted.mnt, "filler"));
  // Several pipelined commits in flight, a synchronous write, and a multi-record commit.
  const outcomes = await Promise.all([
    refusal(put("full-0", 10)),
    refusal(put("full-1", 11)),
    refusal(put("full-2", 12)),
    refusal(client.call("branches.create", { collection: "c", branch: "b" })),
    refusal(client.call("collections.create", { collection: "d" })),
  ]);
  assert.deepEqual(outcomes.slice(0, 3), ["internal_error", "internal_error", "internal_error"]);
  for (const outcome of outcomes.slice(3))
    assert.ok(["internal_error", "accepted"].includes(outcome));
  assert.equal(exited, false, "the store process is alive");
  // Reads are served on the full disk.
  const read = await client.get("c", "before-1");
  assert.equal((read.value as { n: number }).n, 1);
  assert.equal((await client.get("c", "full-0")).found, false);
  await client.call("history.list", { collection: "c" });
  await client.call("store.stats");

  rmSync(join(mounted.mnt, "filler"));
  await put("after-0", 20);
  await put("after-1", 21);
  assert.equal((await client.get("c", "after-1")).found, true);
  assert.equal(exited, false);

  // Restart: every acknowledged commit is there, nothing refused is.
  await client.close();
  child.kill("SIGKILL");
  await new Promise((resolve) => (exited ? resolve(null) : child.once("exit", resolve)));
  // A new socket path: the killed process left its socket file behind.
  const again = join(mounted.parent, "s2.sock");
  child = await startChild(dir, again);
  client = await StoreClient.connect(again, { client: "full" });
  for (const [key, n] of acknowledged) {
    const got = await client.get("c", key);
    assert.equal(got.found, true, `acknowledged ${key} is missing`);
    assert.equal((got.value as { n: number }).n, n);
  }
  for (const key of ["full-0", "full-1", "full-2"]) {
    assert.equal((await client.get("c", key)).found, false, `${key} was refused yet kept`);
  }
  await client.close();
});

test("a full disk in process: synchronous commits and releases refuse with internal_error and the store recovers", async (t) => {
  const mounted = mountOrSkip(t);
  if (mounted === undefined) return;
  const dir = join(mounted.mnt, "data");
  await createStore(dir, { shards: 2, cacheBytesTotal: 8 << 20, executorThreads: 1 });
  const retention = {
    releaseMaxRows: 1024,
    releaseBatch: 1_000_000,
    keep: { versions: 1, days: 0 },
  };
  let store = openStore(engineOptions(dir, { keptVersions: 1, retention }));
  after(() => store.close());
  const main = { collection: "c", branch: "main" };
  store.createCollection("c");
  store.put(main, [{ key: "a", value: big(0) }]);
  store.put(main, [{ key: "a", value: big(1) }]);
  store.put(main, [{ key: "a", value: big(2) }]);

  fill(join(mounted.mnt, "filler"));
  const failed = (action: () => unknown) => {
    try {
      action();
      return "accepted";
    } catch (error) {
      return error instanceof SkeinError ? error.code : String(error);
    }
  };
  assert.equal(
    failed(() => store.put(main, [{ key: "b", value: big(3) }])),
    "internal_error",
  );
  assert.equal(
    failed(() => store.put(main, [{ key: "b", value: big(4) }])),
    "internal_error",
  );
  // Reads see the last written state; a release may or may not fit in the free pages, but
  // either way it answers and the store goes on.
  assert.equal((store.get(main, "a").value as { n: number }).n, 2);
  assert.ok(["internal_error", "accepted"].includes(failed(() => store.release(Date.now() + 1))));

  rmSync(join(mounted.mnt, "filler"));
  const receipt = store.put(main, [{ key: "b", value: big(5) }]);
  await store.close();
  store = openStore(engineOptions(dir, { keptVersions: 1, retention }));
  assert.equal((store.get(main, "b").value as { n: number }).n, 5);
  assert.equal(store.get(main, "b").version, receipt.version);
  assert.equal((store.get(main, "a").value as { n: number }).n, 2);
});
