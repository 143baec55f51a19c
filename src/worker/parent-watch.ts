/**
 * A supervised worker stops when its supervisor is gone. The server is the parent of every
 * worker it launches from a deployment record; when the server is killed (SIGKILL, OOM) it
 * cannot stop them, and the next server start launches fresh ones, so a worker left behind
 * would serve its queue twice over. Linux re-parents an orphan (to init or a subreaper), so
 * a parent pid other than the supervisor's means the supervisor died; the worker then stops
 * as on SIGTERM. The supervisor names itself in SKEIN_SUPERVISOR_PID, so a supervisor that
 * died while the worker was still starting is noticed too (the first check is at once).
 * Only deployment-launched workers (SKEIN_DEPLOYMENT set) watch: a worker started by hand
 * from a shell that exits keeps running, as a user would expect.
 */

export { type ParentWatch, type ParentWatchOptions, watchParent } from "../common/parent-watch.ts";

/** SKEIN_SUPERVISOR_PID, when it holds a pid. */
export function supervisorPid(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const text = env.SKEIN_SUPERVISOR_PID ?? "";
  return /^[1-9][0-9]{0,9}$/.test(text) ? Number(text) : undefined;
}
