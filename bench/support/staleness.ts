/**
 * Whether a recorded figure still describes the code: a figure measured at commit C is stale
 * once a later commit changed a path it measures (the `measures` of its results file: the
 * bench's own file and the source it drives). Git answers: the last commit touching those
 * paths must be C or an ancestor of C. Figures with no commit (carried from before results
 * recorded one) or with a commit this history lacks cannot be judged, and say so.
 */

import { execFileSync } from "node:child_process";
import type { BenchResult } from "./results.ts";

export type Freshness =
  | { readonly kind: "current" }
  | { readonly kind: "stale"; readonly changed: readonly string[]; readonly since: string }
  | { readonly kind: "unknown-commit" }
  | { readonly kind: "foreign-commit" };

function git(root: string, args: string[]): string | null {
  try {
    return execFileSync("git", args, {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return null;
  }
}

/** How `result`'s figures stand against the checkout `root` at HEAD. */
export function freshness(root: string, result: BenchResult): Freshness {
  const commit = result.commit;
  if (commit === null) return { kind: "unknown-commit" };
  if (git(root, ["cat-file", "-e", `${commit}^{commit}`]) === null) {
    return { kind: "foreign-commit" };
  }
  const paths = ["--", ...result.measures];
  const last = git(root, ["log", "-1", "--format=%H", "HEAD", ...paths]);
  if (last === null || last === "") return { kind: "current" };
  if (git(root, ["merge-base", "--is-ancestor", last, commit]) !== null) return { kind: "current" };
  const changed = (git(root, ["diff", "--name-only", commit, "HEAD", ...paths]) ?? "")
    .split("\n")
    .filter((line) => line !== "");
  const since = git(root, ["log", "-1", "--format=%h %cs", last]) ?? last.slice(0, 12);
  return { kind: "stale", changed, since };
}
