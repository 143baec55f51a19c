// The local supervisor with real child processes (small `node -e` programs): start, stop
// with SIGTERM then SIGKILL, a stop the OS refuses, crash restarts with exponential
// backoff, launch replacement, launch failure, log files and close.

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import { silentLogger } from "../../../src/common/log.ts";
import {
  type ChildHandle,
  type Launcher,
  type LaunchSpec,
  processLauncher,
} from "../../../src/workflow/supervisor/launcher.ts";
import { Supervisor } from "../../../src/workflow/supervisor/supervisor.ts";
import { alive, until } from "../deployments/support.ts";

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function spec(name: string, code: string, revision = 1): Promise<LaunchSpec> {
  const dir = await mkdtemp(join(tmpdir(), "skein-supervisor-"));
  dirs.push(dir);
  return {
    name,
    revision,
    command: process.execPath,
    args: ["-e", code],
    env: { SKEIN_DEPLOYMENT: `${name}@${revision}` },
    logFile: join(dir, "logs", `${name}.log`),
  };
}

const FOREVER = "setInterval(() => {}, 1000);";
// Says so once its SIGTERM handler is installed: the test stops it only then.
const DEAF =
  "process.on('SIGTERM', () => {}); console.log('deaf to SIGTERM'); setInterval(() => {}, 1000);";

function supervisor(launcher: Launcher = processLauncher, stopGraceMs = 300): Supervisor {
  return new Supervisor({
    launcher,
    logger: silentLogger(),
    stopGraceMs,
    backoff: { initialMs: 40, maxMs: 320 },
    stableMs: 60_000,
  });
}

describe("supervisor", () => {
  test("apply(running) resolves with a live child whose output and environment reach its log file", async () => {
    const s = supervisor();
    const target = await spec(
      "logs",
      `console.log('out', process.env.SKEIN_DEPLOYMENT); console.error('err line'); ${FOREVER}`,
    );
    const status = await s.apply("logs", target);
    assert.equal(status.state, "running");
    assert.equal(alive(status.pid!), true);
    const text = await until("log lines", async () => {
      const t = await readFile(target.logFile, "utf8").catch(() => "");
      return t.includes("err line") && t.includes("out logs@1") ? t : undefined;
    });
    assert.match(text, /out logs@1/);
    await s.close();
    assert.equal(alive(status.pid!), false);
  });

  test("apply(stopped) sends SIGTERM; a worker ignoring it is killed after the grace", async () => {
    const s = supervisor();
    const polite = await s.apply("polite", await spec("polite", FOREVER));
    const stopped = await s.apply("polite", null);
    assert.deepEqual(
      [stopped.state, stopped.pid, stopped.lastExit?.signal],
      ["stopped", null, "SIGTERM"],
    );
    assert.equal(alive(polite.pid!), false);

    const deafSpec = await spec("deaf", DEAF);
    const deaf = await s.apply("deaf", deafSpec);
    await until("the SIGTERM handler to be installed", async () =>
      (await readFile(deafSpec.logFile, "utf8").catch(() => "")).includes("deaf to SIGTERM")
        ? true
        : undefined,
    );
    const killed = await s.apply("deaf", null);
    assert.deepEqual([killed.state, killed.lastExit?.signal], ["stopped", "SIGKILL"]);
    assert.equal(alive(deaf.pid!), false);
    await s.close();
  });

  test("a stop the OS refuses is stop_failed; forget still forgets the process", async () => {
    const children: ChildHandle[] = [];
    const refusing: Launcher = {
      async launch(target) {
        const child = await processLauncher.launch(target);
        children.push(child);
        return {
          pid: child.pid,
          exited: child.exited,
          signal: () => {
            throw Object.assign(new Error("kill EPERM"), { code: "EPERM" });
          },
        };
      },
    };
    const s = supervisor(refusing);
    const status = await s.apply("stuck", await spec("stuck", FOREVER));
    await assert.rejects(
      s.forget("stuck"),
      (error: unknown) => error instanceof SkeinError && error.code === "stop_failed",
    );
    assert.equal(s.status("stuck"), undefined);
    process.kill(status.pid!, "SIGKILL");
    await children[0]!.exited;
  });

  test("a crashing worker restarts with exponential backoff, capped; restarts and last exit are kept", async () => {
    const waits: (number | null)[] = [];
    let s: Supervisor;
    const recording: Launcher = {
      launch(target) {
        waits.push(s.status("crash")?.lastBackoffMs ?? null);
        return processLauncher.launch(target);
      },
    };
    s = supervisor(recording);
    await s.apply("crash", await spec("crash", "process.exit(3)"));
    const backing = await until("six launches, then a backoff", () => {
      const st = s.status("crash");
      return waits.length >= 6 && st?.state === "backing_off" ? st : undefined;
    });
    assert.ok(backing.restarts >= 6);
    assert.equal(backing.lastExit?.code, 3);
    assert.equal(typeof backing.nextStartAt, "number");
    assert.equal((await s.apply("crash", null)).state, "stopped");
    assert.deepEqual(waits.slice(0, 6), [null, 40, 80, 160, 320, 320]);
    await s.close();
  });

  test("a new launch revision replaces the child; the same revision keeps it", async () => {
    const s = supervisor();
    const first = await s.apply("rev", await spec("rev", FOREVER, 1));
    const same = await s.apply("rev", await spec("rev", FOREVER, 1));
    assert.equal(same.pid, first.pid);
    const second = await s.apply("rev", await spec("rev", FOREVER, 2));
    assert.notEqual(second.pid, first.pid);
    assert.equal(second.revision, 2);
    assert.equal(alive(first.pid!), false);
    assert.equal(alive(second.pid!), true);
    await s.close();
    assert.equal(alive(second.pid!), false);
  });

  test("a launch that cannot start backs off instead of failing the apply", async () => {
    const s = supervisor();
    const target = { ...(await spec("missing", FOREVER)), command: "/nonexistent/skein-node" };
    const status = await s.apply("missing", target);
    assert.equal(status.state, "backing_off");
    assert.equal(status.restarts, 1);
    await s.close();
    assert.equal(s.status("missing")?.state, "stopped");
  });
});
