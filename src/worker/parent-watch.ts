/**
 * A supervised worker stops when its supervisor is gone. The server is the parent of every
 * worker it launches from a deployment record; when the server is killed (SIGKILL, OOM) it
 * cannot stop them, and the next server start launches fresh ones, so a worker left behind
 * would serve its queue twice over. Linux re-parents an orphan (to init or a subreaper), so
 * a change of `process.ppid` means the supervisor died; the worker then stops as on SIGTERM.
 * Only deployment-launched workers (SKEIN_DEPLOYMENT set) watch: a worker started by hand
 * from a shell that exits keeps running, as a user would expect.
 */

export interface ParentWatch {
  stop(): void;
}

export function watchParent(onGone: () => void, intervalMs = 500): ParentWatch {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      onGone();
    }
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
