/**
 * The `exec` kind: an action runs a command. The attempt's input JSON is written to its
 * stdin, one JSON value on its stdout is the output, and a non-zero exit is a failure that
 * carries the tail of its stderr. The command runs in its own process group (relative paths
 * and the working directory resolve against the worker document's folder), so a cancel
 * reaches everything it started: SIGTERM to the group, SIGKILL after the grace period.
 */

import { spawn } from "node:child_process";
import { resolve } from "node:path";
import {
  array,
  type Decoded,
  object,
  optional,
  string,
  stringMap,
  u32,
  withDefault,
} from "../../common/decode/index.ts";
import { ActivityError, abortError, checkJsonText, type Handler, tail } from "../handler.ts";

export const execAction = object({
  command: array(string({ minBytes: 1 }), { min: 1 }),
  cwd: optional(string({ minBytes: 1 })),
  env: optional(stringMap(string())),
  cancel_grace_ms: withDefault(u32({ max: 600_000 }), 2_000),
});

export type ExecAction = Decoded<typeof execAction>;

/** Output beyond this is refused rather than buffered without bound. */
const MAX_STDOUT_BYTES = 16 * 1024 * 1024;
const STDERR_TAIL_BYTES = 4096;

export function execHandler(action: ExecAction, baseDir: string): Handler {
  const [file, ...args] = action.command as [string, ...string[]];
  const cwd = resolve(baseDir, action.cwd ?? ".");
  const env = { ...process.env, ...Object.fromEntries(action.env ?? []) };
  return (inputJson, ctx) =>
    new Promise<string>((done, fail) => {
      if (ctx.signal.aborted) return fail(abortError(ctx.signal));
      const child = spawn(file, args, {
        cwd,
        env,
        detached: true,
        stdio: ["pipe", "pipe", "pipe"],
      });
      const stdout: Buffer[] = [];
      let stdoutBytes = 0;
      let stderr = "";
      let tooLarge = false;
      let spawnError: Error | undefined;
      let killTimer: NodeJS.Timeout | undefined;
      const killGroup = (signal: NodeJS.Signals) => {
        if (child.pid === undefined) return;
        try {
          process.kill(-child.pid, signal);
        } catch {
          // The group is already gone.
        }
      };
      const onAbort = () => {
        killGroup("SIGTERM");
        killTimer = setTimeout(() => killGroup("SIGKILL"), action.cancel_grace_ms);
        killTimer.unref();
      };
      ctx.signal.addEventListener("abort", onAbort, { once: true });
      child.stdout.on("data", (chunk: Buffer) => {
        stdoutBytes += chunk.length;
        if (stdoutBytes > MAX_STDOUT_BYTES) {
          tooLarge = true;
          return;
        }
        stdout.push(chunk);
      });
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (chunk: string) => {
        stderr += chunk;
        if (stderr.length > STDERR_TAIL_BYTES * 4) stderr = stderr.slice(-STDERR_TAIL_BYTES * 2);
      });
      // A command that never reads its stdin closes the pipe; that is not a failure.
      child.stdin.on("error", () => {});
      child.stdin.end(inputJson);
      child.on("error", (error) => {
        spawnError = error;
      });
      child.on("close", (code, signal) => {
        ctx.signal.removeEventListener("abort", onAbort);
        if (killTimer !== undefined) clearTimeout(killTimer);
        if (ctx.signal.aborted) return fail(abortError(ctx.signal));
        if (spawnError !== undefined) {
          return fail(
            new ActivityError(
              "spawn_failed",
              `cannot run ${JSON.stringify(file)}: ${spawnError.message}`,
              {
                nonRetryable: true,
              },
            ),
          );
        }
        const err = tail(stderr, STDERR_TAIL_BYTES);
        if (code !== 0) {
          const how = signal === null ? `exited with status ${code}` : `was killed by ${signal}`;
          return fail(new ActivityError("exit_status", `command ${how}; stderr: ${err}`));
        }
        if (tooLarge) {
          return fail(
            new ActivityError("bad_output", `stdout exceeded ${MAX_STDOUT_BYTES} bytes`, {
              nonRetryable: true,
            }),
          );
        }
        try {
          done(checkJsonText(Buffer.concat(stdout).toString("utf8"), "stdout"));
        } catch (error) {
          fail(error);
        }
      });
    });
}
