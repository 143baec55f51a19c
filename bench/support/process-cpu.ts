/**
 * CPU seconds another process has used, from /proc (Linux): how the benchmarks count the
 * server's, the workers' and an anchor's CPU beside their own `process.cpuUsage()`.
 */

import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS = 100;

/**
 * The fields of a /proc stat file (a process's, or a thread's under /proc/PID/task) after
 * the command name, which may hold spaces and ends at the last ")".
 */
export function statFields(file: string): string[] {
  const stat = readFileSync(file, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/**
 * Minor page faults of process `pid` so far, every thread: first touches of fresh memory,
 * each costing the process 13–18 µs on this VM (docs/store-model.md, "Page faults").
 */
export function processMinorFaults(pid: number): number {
  // minflt is field 10 of stat (7 after the command name).
  return Number(statFields(`/proc/${pid}/stat`)[7]);
}

/** User + system CPU seconds of process `pid` so far. */
export function processCpuSeconds(pid: number): number {
  // utime and stime are fields 14 and 15 of stat (11 and 12 after the command name), in ticks.
  const fields = statFields(`/proc/${pid}/stat`);
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}
