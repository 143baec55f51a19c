/**
 * Noticing that the process that started us is gone. Linux re-parents an orphan (to init or
 * a subreaper), so a parent pid other than the one we started with means the parent died.
 * Two users: a supervised worker stops when its server is gone (src/worker/parent-watch.ts),
 * and a program started through `npx`/`npm exec` stops when npm is gone (`watchLauncher`):
 * npm forwards SIGTERM only to the `sh -c` it runs the bin with, and that shell dies without
 * passing it on, so `kill -TERM` of the npx process would otherwise leave the server
 * orphaned and listening.
 */

export interface ParentWatch {
  stop(): void;
}

export interface ParentWatchOptions {
  /** The parent's pid; default: the parent this process has now. */
  readonly supervisor?: number | undefined;
  readonly intervalMs?: number;
}

export function watchParent(onGone: () => void, options: ParentWatchOptions = {}): ParentWatch {
  const parent = options.supervisor ?? process.ppid;
  let stopped = false;
  const check = () => {
    if (stopped || process.ppid === parent) return;
    stopped = true;
    clearInterval(timer);
    onGone();
  };
  const timer = setInterval(check, options.intervalMs ?? 500);
  timer.unref();
  setImmediate(check);
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}

/**
 * Under `npx`/`npm exec`/`npm run` (npm sets `npm_execpath`), a launcher that dies makes
 * this process send itself SIGTERM: the program's own graceful stop runs, as if the signal
 * had reached it. One stderr line first (`NAME: launcher gone (npm); stopping`), since
 * nobody sent that signal: without it an operator, or a failing test's log, sees a stop
 * with no cause. Started any other way (a shell, a service manager, a supervisor) nothing
 * is watched: a server started by hand from a shell that exits keeps running.
 */
export function watchLauncher(
  program: string,
  env: NodeJS.ProcessEnv = process.env,
): ParentWatch | undefined {
  if (env.npm_execpath === undefined || env.SKEIN_DEPLOYMENT !== undefined) return undefined;
  return watchParent(() => {
    process.stderr.write(`${program}: launcher gone (npm); stopping\n`);
    process.kill(process.pid, "SIGTERM");
  });
}
