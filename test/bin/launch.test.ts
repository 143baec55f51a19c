// How the programs start: the package's bins run the project's own Node (whatever `node` is
// first on PATH), an older Node gets a plain "needs Node 24" message instead of a stack
// trace, and `kill -TERM` of the `npx skein serve` launcher stops the server cleanly instead
// of leaving it orphaned and listening.

import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { tempDir, writeConfig } from "../workflow/support/server.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SYSTEM_NODE = "/usr/bin/node";
const PROGRAMS = ["skein", "skein-store", "skein-idp"];

function systemNodeMajor(): number | undefined {
  if (!existsSync(SYSTEM_NODE)) return undefined;
  const r = spawnSync(SYSTEM_NODE, ["-p", "process.versions.node"], { encoding: "utf8" });
  return r.status === 0 ? Number(r.stdout.split(".")[0]) : undefined;
}

describe("an older Node says what it needs", () => {
  const major = systemNodeMajor();
  const skip =
    major === undefined || major >= 24 ? `no Node older than 24 at ${SYSTEM_NODE}` : false;
  for (const program of PROGRAMS) {
    test(`${program} on Node ${major}: exit 1, one plain message, no stack trace`, { skip }, () => {
      const r = spawnSync(SYSTEM_NODE, [join(ROOT, "bin", `${program}.js`), "--help"], {
        encoding: "utf8",
      });
      assert.equal(r.status, 1);
      assert.match(
        r.stderr,
        new RegExp(`^${program}: needs Node\\.js 24 or newer; this is Node\\.js ${major}\\.`),
      );
      assert.match(r.stderr, new RegExp(`Run it as \`npx ${program}\``));
      assert.doesNotMatch(r.stderr, /\n\s+at |ERR_/);
    });
  }
});

describe("the bins run the project's Node, whatever node PATH has first", () => {
  for (const program of PROGRAMS) {
    test(`bin/${program} with only the system's directories on PATH`, () => {
      const r = spawnSync(join(ROOT, "bin", program), ["--version"], {
        encoding: "utf8",
        env: { PATH: "/usr/bin:/bin" },
      });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^\d+\.\d+\.\d+\n$/);
    });
  }

  test("skein version reports the project's Node 24", () => {
    const r = spawnSync(join(ROOT, "bin", "skein"), ["version", "-s", "http://127.0.0.1:1"], {
      encoding: "utf8",
      env: { PATH: "/usr/bin:/bin" },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(JSON.parse(r.stdout).client.node, /^24\./);
  });

  test("package.json's bins are these launchers, executable", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      bin: Record<string, string>;
    };
    assert.deepEqual(pkg.bin, {
      skein: "bin/skein",
      "skein-store": "bin/skein-store",
      "skein-idp": "bin/skein-idp",
    });
    for (const path of [...Object.values(pkg.bin), "bin/run-node"]) {
      assert.equal(
        spawnSync("test", ["-x", join(ROOT, path)]).status,
        0,
        `${path} is not executable`,
      );
    }
  });
});

/** The pids whose parent chain reaches `ancestor`, with their command lines. */
function descendants(ancestor: number): { pid: number; cmd: string }[] {
  const parent = new Map<number, number>();
  const cmd = new Map<number, string>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      cmd.set(Number(entry), readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " "));
    } catch {
      // Gone meanwhile.
    }
  }
  const out: { pid: number; cmd: string }[] = [];
  for (const pid of parent.keys()) {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p === ancestor) {
        out.push({ pid, cmd: cmd.get(pid) ?? "" });
        break;
      }
    }
  }
  return out;
}

const alive = (pid: number) =>
  existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");

describe("kill -TERM of the npx launcher stops the server", () => {
  let npx: ChildProcess | undefined;
  let serverPid: number | undefined;
  /** Everything npx started, so a failing test leaves nothing running. */
  let started: number[] = [];
  after(() => {
    npx?.kill("SIGKILL");
    for (const pid of [...started, serverPid ?? 0])
      if (pid > 0 && alive(pid)) process.kill(pid, "SIGKILL");
  });

  test("npx skein serve, then SIGTERM to npx: the server stops gracefully and its port closes", async () => {
    const dir = await tempDir();
    try {
      const config = await writeConfig(dir.path);
      npx = spawn(
        "npx",
        [
          "skein",
          "serve",
          "--config",
          config,
          "--listen",
          "127.0.0.1:0",
          "--grpc-listen",
          "127.0.0.1:0",
        ],
        {
          cwd: ROOT,
          stdio: ["ignore", "pipe", "pipe"],
          env: { ...process.env, SKEIN_LOG_LEVEL: "warn" },
        },
      );
      let out = "";
      let err = "";
      npx.stdout!.setEncoding("utf8").on("data", (c: string) => {
        out += c;
      });
      npx.stderr!.setEncoding("utf8").on("data", (c: string) => {
        err += c;
      });
      const npxExit = new Promise((done) => npx!.once("exit", done));
      for (let i = 0; !/listening on http/.test(out); i++) {
        assert.ok(i < 1200 && npx.exitCode === null, `no listening line:\n${out}\n${err}`);
        await new Promise((done) => setTimeout(done, 50));
      }
      const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
      started = descendants(npx.pid!).map((p) => p.pid);
      const server = descendants(npx.pid!).find((p) => p.cmd.includes("skein.js serve"));
      assert.ok(server !== undefined, JSON.stringify(descendants(npx.pid!)));
      serverPid = server.pid;
      assert.equal((await fetch(`${url}/health`)).status, 200);

      process.kill(npx.pid!, "SIGTERM");
      await npxExit;
      for (let i = 0; alive(serverPid); i++) {
        assert.ok(
          i < 400,
          `the server (pid ${serverPid}) is still running after its launcher died`,
        );
        await new Promise((done) => setTimeout(done, 50));
      }
      assert.match(out, /\nstopped\n/, "the server stopped through its graceful path");
      assert.match(err, /^skein: launcher gone \(npm\); stopping$/m, "it said why it stopped");
      await assert.rejects(fetch(`${url}/health`), "its port is closed");
    } finally {
      await dir.remove();
    }
  });
});
