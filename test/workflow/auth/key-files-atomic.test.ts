// Key and token files are written atomically: a first start whose
// write fails part-way (here every write past 0 bytes fails, as on a full disk, through
// RLIMIT_FSIZE) leaves no file behind, so the next start creates the key and starts.
// Before, the failed start left a 0-byte signing-key.pem and every later start refused it.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { writeFileAtomic } from "../../../src/common/files.ts";
import { call, SKEIN_BIN, startServe, tempDir, writeConfig } from "../support/server.ts";

/** `skein serve` with writes beyond 0 bytes failing (EFBIG; SIGXFSZ ignored, so no kill). */
function serveWithFullDisk(configFile: string) {
  return spawnSync(
    "sh",
    [
      "-c",
      'ulimit -f 0; trap "" XFSZ; exec "$0" "$@"',
      process.execPath,
      SKEIN_BIN,
      "serve",
      "--config",
      configFile,
      "--listen",
      "127.0.0.1:0",
      "--grpc-listen",
      "127.0.0.1:0",
    ],
    { encoding: "utf8", env: { ...process.env, SKEIN_LOG_LEVEL: "warn" }, timeout: 60_000 },
  );
}

describe("key and token files are written atomically", () => {
  test("a first start that cannot write the signing key leaves nothing; the next start works", async (t) => {
    const dir = await tempDir();
    t.after(dir.remove);
    const configFile = await writeConfig(dir.path);
    const failed = serveWithFullDisk(configFile);
    assert.notEqual(failed.status, 0, failed.stdout);
    assert.match(failed.stderr, /signing key/);
    const dataDir = join(dir.path, "data");
    assert.deepEqual(await readdir(dataDir), [], "no key, token or temp file is left");

    const server = await startServe(configFile);
    try {
      assert.match(server.stdout(), /signing key: .* \(created\)/);
      for (const file of ["signing-key.pem", "admin.token"]) {
        const s = await stat(join(dataDir, file));
        assert.equal(s.mode & 0o777, 0o600, file);
        assert.ok(s.size > 0, file);
      }
      const health = await call(server.url, "GET", "/health");
      assert.equal(health.status, 200);
    } finally {
      await server.stop();
    }
  });

  test("a 0-byte signing key left by an older build is replaced, not refused", async (t) => {
    const dir = await tempDir();
    t.after(dir.remove);
    const configFile = await writeConfig(dir.path);
    const dataDir = join(dir.path, "data");
    const { mkdir } = await import("node:fs/promises");
    await mkdir(dataDir, { mode: 0o700 });
    await writeFile(join(dataDir, "signing-key.pem"), "", { mode: 0o600 });
    const server = await startServe(configFile);
    try {
      assert.match(server.stdout(), /signing key: .* \(created\)/);
    } finally {
      await server.stop();
    }
  });

  test("writeFileAtomic: mode 0600, no temp file left, refuses to replace unless asked", async (t) => {
    const dir = await tempDir();
    t.after(dir.remove);
    const path = join(dir.path, "secret");
    await writeFileAtomic(path, "one", { mode: 0o600 });
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    await assert.rejects(writeFileAtomic(path, "two", { mode: 0o600 }), { code: "EEXIST" });
    await writeFileAtomic(path, "three", { mode: 0o600, replace: true });
    const { readFile } = await import("node:fs/promises");
    assert.equal(await readFile(path, "utf8"), "three");
    assert.deepEqual(await readdir(dir.path), ["secret"]);
  });
});
