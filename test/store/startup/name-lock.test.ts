import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { SkeinError } from "../../../src/common/errors.ts";
import {
  acquireNameLock,
  checkNameFree,
  lockOwner,
  lockPathFor,
} from "../../../src/store/startup/name-lock.ts";

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "skein-lock-"));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A real process that stays alive until killed. */
function sleeper() {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  return child;
}

describe("store name lock", () => {
  test("acquire writes this pid; release removes it; the name is free again", async () => {
    const lock = await acquireNameLock(dir, "a");
    assert.equal((await readFile(lock.path, "utf8")).trim(), String(process.pid));
    await lock.release();
    assert.equal(await lockOwner(lockPathFor(dir, "a")), undefined);
    await checkNameFree(dir, "a");
  });

  test("a live owner refuses both the check and the acquisition", async () => {
    const child = sleeper();
    try {
      await writeFile(lockPathFor(dir, "b"), `${child.pid}\n`);
      for (const attempt of [() => checkNameFree(dir, "b"), () => acquireNameLock(dir, "b")]) {
        await assert.rejects(attempt(), (e: SkeinError) => {
          assert.equal(e.code, "store_name_in_use");
          assert.match(e.message, new RegExp(`^name: .*pid ${child.pid}`));
          return true;
        });
      }
    } finally {
      child.kill("SIGKILL");
    }
  });

  test("a dead owner's lock is taken over", async () => {
    const child = sleeper();
    const exited = new Promise((done) => child.once("exit", done));
    child.kill("SIGKILL");
    await exited;
    await writeFile(lockPathFor(dir, "c"), `${child.pid}\n`);
    await checkNameFree(dir, "c");
    const lock = await acquireNameLock(dir, "c");
    assert.equal((await readFile(lock.path, "utf8")).trim(), String(process.pid));
    await lock.release();
  });

  const junk = ["", "not a pid", "-1", "0"];
  for (const text of junk) {
    test(`a lock holding ${JSON.stringify(text)} is stale`, async () => {
      await writeFile(lockPathFor(dir, "d"), text);
      const lock = await acquireNameLock(dir, "d");
      await lock.release();
    });
  }

  test("release leaves a lock that another process took over", async () => {
    const lock = await acquireNameLock(dir, "e");
    await writeFile(lock.path, "1\n");
    await lock.release();
    assert.equal((await readFile(lock.path, "utf8")).trim(), "1");
  });
});
