// `skein admin backup PATH`: an online SQLite backup taken by the real server while a client
// keeps starting runs (real `skein serve`, real `skein admin` process), then restored by
// putting the copy in place of the database and starting the server again. Every run whose
// start was acknowledged before the backup began is in the restored server; refusals
// (existing target, missing directory, relative path, narrow bearer) leave nothing behind.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { access, copyFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { until } from "../../support/until.ts";
import {
  adminToken,
  call,
  SKEIN_BIN,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";

const DEFINITION = `
name: slow
task_queue: nobody-serves-this
steps:
  - { id: a, call: { action: wait } }
`;

/** Runs `skein ARGS` as a process without blocking this event loop (the load goes on). */
function skeinAsync(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [SKEIN_BIN, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, SKEIN_LOG_LEVEL: "warn", ...env },
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  return new Promise<{ status: number | null; out: string; err: string }>((done) =>
    child.on("exit", (status) => done({ status, out, err })),
  );
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

async function allRuns(url: string, token: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | undefined;
  do {
    const r = await call(url, "POST", "/workflows/list", {
      token,
      body: { limit: 1000, ...(cursor === undefined ? {} : { cursor }) },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    for (const run of r.body.runs) ids.add(run.workflow_id);
    cursor = r.body.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return ids;
}

describe("skein admin backup (SQLite, online, real processes)", () => {
  test("a backup taken under write load restores every run acknowledged before it began", async (t) => {
    const dir = await tempDir();
    t.after(() => dir.remove());
    const config = await writeConfig(dir.path, '[namespaces]\ndefault = "default"');
    let server = await startServe(config);
    t.after(() => server.stop());
    const admin = await adminToken(dir.path);
    const registered = await call(server.url, "POST", "/workflows/definitions", {
      token: admin,
      body: { definition: DEFINITION },
    });
    assert.equal(registered.status, 200);

    const acked: string[] = [];
    let writing = true;
    const lanes = [0, 1, 2, 3].map(async () => {
      while (writing) {
        const r = await call(server.url, "POST", "/workflows/start", {
          token: admin,
          body: { name: "slow" },
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        acked.push(r.body.workflow_id);
      }
    });
    await until("100 acknowledged starts", () => acked.length >= 100, { timeoutMs: 60_000 });
    const before = [...acked];
    const target = join(dir.path, "backup.db");
    const backup = await skeinAsync(["admin", "backup", target, "--server", server.url], {
      SKEIN_TOKEN: admin,
    });
    writing = false;
    await Promise.all(lanes);
    assert.equal(backup.status, 0, backup.err);
    assert.match(backup.out, /^backup written: .*backup\.db \(\d+ bytes, \d+ pages\)/);

    // Refusals leave nothing behind.
    const again = await call(server.url, "POST", "/admin/backup", {
      token: admin,
      body: { path: target },
    });
    assert.deepEqual([again.status, again.body.error.code], [409, "backup_exists"]);
    const orphan = join(dir.path, "missing", "b.db");
    const missing = await call(server.url, "POST", "/admin/backup", {
      token: admin,
      body: { path: orphan },
    });
    assert.deepEqual([missing.status, missing.body.error.code], [400, "invalid_backup_path"]);
    const relative = await call(server.url, "POST", "/admin/backup", {
      token: admin,
      body: { path: "b.db" },
    });
    assert.equal(relative.status, 400);
    const narrow = await tokenFor(dir.path, { namespaces: ["default"] });
    const forbidden = await call(server.url, "POST", "/admin/backup", {
      token: narrow,
      body: { path: join(dir.path, "other.db") },
    });
    assert.deepEqual([forbidden.status, forbidden.body.error.code], [403, "forbidden"]);
    assert.equal(await exists(join(dir.path, "other.db")), false);

    // Restore: with the server stopped, the copy replaces the database (and its WAL).
    await server.stop();
    const db = join(dir.path, "data", "skein.db");
    for (const suffix of ["", "-wal", "-shm"]) await rm(`${db}${suffix}`, { force: true });
    await copyFile(target, db);
    server = await startServe(config);
    const restored = await allRuns(server.url, admin);
    for (const id of before)
      assert.ok(restored.has(id), `run ${id} acknowledged before the backup`);
    assert.ok(restored.size <= acked.length);
    // The restored server runs: it takes a new start.
    const next = await call(server.url, "POST", "/workflows/start", {
      token: admin,
      body: { name: "slow" },
    });
    assert.equal(next.status, 200);
  });
});
