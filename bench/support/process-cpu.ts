/**
 * CPU seconds another process has used, from /proc (Linux): how the benchmarks count the
 * server's, the workers' and an anchor's CPU beside their own `process.cpuUsage()`.
 */

import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS = 100;

/** User + system CPU seconds of process `pid` so far. */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // utime and stime are fields 14 and 15 of stat (11 and 12 after the command name, which
  // may hold spaces and ends at the last ")"), in ticks.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}
