// The README's walk-throughs run as written: each `<!-- walkthrough: NAME -->` block is
// extracted and run by bash (-e, -u, pipefail) from the checkout, exactly as a reader pastes
// it, with a scratch HOME and none of the SKEIN_* variables set. Each block moves itself to
// a temporary directory, so nothing may land in the checkout: `git status` is compared
// before and after. The workflow server listens on its default ports (7380, 7381), as the
// README says; the block's own `kill` stops it. Those ports are the machine's, not the
// suite's: two suites running at once (`npm test & npm test`) take turns at that block
// through a lock file that `flock` holds for the block's life (the kernel lets go of it
// when the holder dies, so a killed run never leaves it taken).

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BOUND_MS = 150_000;
/** The lock of the default ports, shared by every checkout on this machine. */
const PORTS_LOCK = join(tmpdir(), "skein-walkthrough-ports-7380.lock");
/** How long a block waits for another suite's block to let go of the ports. */
const LOCK_WAIT_S = 600;
/** Printed on stderr once the lock is held: the block's bound counts from there. */
const HELD = "__skein_walkthrough_lock_held__";

async function block(name: string): Promise<string> {
  const readme = await readFile(join(ROOT, "README.md"), "utf8");
  const match = new RegExp(`<!-- walkthrough: ${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\``).exec(
    readme,
  );
  assert.ok(match !== null, `README.md has no walkthrough ${name}`);
  return match[1]!;
}

const gitStatus = () =>
  spawnSync("git", ["status", "--porcelain", "--untracked-files=all"], {
    cwd: ROOT,
    encoding: "utf8",
  }).stdout;

/**
 * Runs the block in its own process group (killed whole if it overruns the bound). With
 * `lock`, it runs while holding that lock file; the bound starts once the lock is held.
 */
async function runBlock(
  script: string,
  lock?: string,
): Promise<{ code: number | null; out: string; err: string }> {
  const home = await mkdtemp(join(tmpdir(), "skein-readme-home-"));
  const env: Record<string, string> = { HOME: home, PATH: process.env.PATH ?? "/usr/bin:/bin" };
  const bash = ["bash", "-euo", "pipefail", "-c", `echo ${HELD} >&2\n${script}`];
  const argv = lock === undefined ? bash : ["flock", "-w", String(LOCK_WAIT_S), lock, ...bash];
  try {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let timer: NodeJS.Timeout | undefined;
    const kill = () => process.kill(-child.pid!, "SIGKILL");
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      out += c;
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      err += c;
      if (timer === undefined && err.includes(HELD)) timer = setTimeout(kill, BOUND_MS);
    });
    const code = await new Promise<number | null>((done) => child.once("close", done));
    clearTimeout(timer);
    err = err.replace(`${HELD}\n`, "");
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // The group is gone: every program the block started has stopped.
    }
    return { code, out, err };
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

describe("the README's walk-throughs, as written", () => {
  test("workflow server: serve, namespaces, register, a worker, a run to its end", async () => {
    const before = gitStatus();
    const r = await runBlock(await block("workflow"), PORTS_LOCK);
    assert.equal(r.code, 0, `${r.out}\n${r.err}`);
    assert.match(r.out, /^created namespace agents$|"name":"agents","created":true/m);
    assert.match(r.out, /"status":"Completed"/);
    assert.match(r.out, /"output":\{"order_id":42,"receipt":"rcpt-42-42","tracking":"trk-42"\}/);
    assert.match(r.out, /"name":"order-worker","kind":"module"/);
    assert.equal(gitStatus(), before, "the walk-through wrote into the checkout");
  });

  test("store: create, collections, a branch, reads on both branches", async () => {
    const before = gitStatus();
    const r = await runBlock(await block("store"));
    assert.equal(r.code, 0, `${r.out}\n${r.err}`);
    // The draft branch's record, then main's, unchanged.
    const draft = r.out.lastIndexOf('"hello, world"');
    const main = r.out.lastIndexOf('"hello"');
    assert.ok(draft > 0 && main > draft, r.out);
    assert.equal(gitStatus(), before, "the walk-through wrote into the checkout");
  });
});
