/**
 * Where and when a figure was measured: the date, the machine's load average (the machine
 * is shared, so a figure without its load means little), and the commit of the checkout with
 * whether it had uncommitted changes. `npm run bench:report` prints these beside each figure
 * and compares the commit with the last change to the files the bench measures.
 */

import { execFileSync } from "node:child_process";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";

export interface Provenance {
  readonly at: string;
  /** os.loadavg() when the bench started: 1, 5 and 15 minutes. */
  readonly loadavg: readonly number[];
  /** `git rev-parse HEAD`, or null when not in a git checkout. */
  readonly commit: string | null;
  /** Whether tracked code (not results or *.md) differed from the commit; null if unknown. */
  readonly dirty: boolean | null;
  readonly machine: {
    readonly node: string;
    readonly cpus: number;
    readonly cpu: string;
    readonly memory_bytes: number;
  };
}

function git(cwd: string, args: string[]): string | null {
  try {
    return execFileSync("git", args, {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    return null;
  }
}

/** Taken when a bench starts, in the checkout `root`. */
export function provenance(root: string): Provenance {
  const commit = git(root, ["rev-parse", "HEAD"])?.trim() ?? null;
  // Changes to results and prose (what a bench run and its write-up touch) do not change
  // what is measured: only tracked code counts as dirty.
  const status = git(root, [
    "status",
    "--porcelain",
    "--untracked-files=no",
    "--",
    ".",
    ":(exclude)bench/results",
    ":(exclude)*.md",
  ]);
  return {
    at: new Date().toISOString(),
    loadavg: loadavg().map((l) => Number(l.toFixed(2))),
    commit,
    dirty: status === null ? null : status.trim() !== "",
    machine: {
      node: process.version,
      cpus: availableParallelism(),
      cpu: cpus()[0]?.model ?? "unknown",
      memory_bytes: totalmem(),
    },
  };
}
