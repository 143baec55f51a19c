/**
 * The supervisor's process interface: launch one worker process with its output appended
 * to its size-bounded, rotated log file (rotating-log.ts), and signal it. The real implementation spawns a child of this server (so
 * it is reaped by this process and never left a zombie); tests may wrap it to inject a
 * failing stop. The launch resolves only once the OS has started the child, so a caller
 * that awaited it holds a live pid.
 */

import { spawn } from "node:child_process";
import { supervisionFailure } from "../errors.ts";
import { acquireLog, DEFAULT_LOG_LIMITS, type LogLimits } from "./rotating-log.ts";

export interface LaunchSpec {
  readonly name: string;
  /** The record's launch revision this process runs. */
  readonly revision: number;
  readonly command: string;
  readonly args: readonly string[];
  /** Added to this server's environment. */
  readonly env: Readonly<Record<string, string>>;
  readonly logFile: string;
  /** The log's size bound and rotated files kept (default DEFAULT_LOG_LIMITS). */
  readonly logLimits?: LogLimits;
}

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: string | null;
  /** Milliseconds since the epoch. */
  readonly at: number;
}

export interface ChildHandle {
  readonly pid: number;
  readonly exited: Promise<ProcessExit>;
  /** Sends a signal; throws when the OS refuses it. */
  signal(signal: NodeJS.Signals): void;
}

export interface Launcher {
  launch(spec: LaunchSpec): Promise<ChildHandle>;
}

export const processLauncher: Launcher = {
  launch(spec) {
    const { log, release } = acquireLog(spec.logFile, spec.logLimits ?? DEFAULT_LOG_LIMITS);
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(spec.command, [...spec.args], {
        // Output comes through this server into the size-bounded log (rotating-log.ts).
        stdio: ["ignore", "pipe", "pipe"],
        // Its own process group: a terminal's Ctrl-C reaches the server only, which then
        // stops its workers in order instead of racing their exits with restarts.
        detached: true,
        // Never the server's own SKEIN_TOKEN (an operator's admin bearer, say): a deployed
        // worker authenticates only with what its record's verb names (--token-file).
        env: { ...withoutBearer(process.env), ...spec.env },
      });
    } catch (error) {
      release();
      throw error;
    }
    child.stdout!.on("data", (chunk: Buffer) => log.write(chunk));
    child.stderr!.on("data", (chunk: Buffer) => log.write(chunk));
    // Both pipes drained and the process gone: the log is released.
    child.once("close", release);
    const exited = new Promise<ProcessExit>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() })),
    );
    return new Promise<ChildHandle>((resolve, reject) => {
      child.once("error", (error) => {
        release();
        reject(
          supervisionFailure("launch_failed", `cannot start ${spec.command}: ${error.message}`),
        );
      });
      child.once("spawn", () =>
        resolve({
          pid: child.pid!,
          exited,
          signal: (signal) => {
            if (child.exitCode === null && child.signalCode === null)
              process.kill(child.pid!, signal);
          },
        }),
      );
    });
  },
};

function withoutBearer(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { SKEIN_TOKEN: _dropped, ...rest } = env;
  return rest;
}
