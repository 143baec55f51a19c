/**
 * The release driver: applies the retention policy to history rows (the heads that left a
 * branch record's kept_versions window; the record's window itself is never released here,
 * and the head is always kept). A row may be released only when both protections allow
 * it: at least `keep.versions` newer-or-equal versions of its branch remain (the head
 * counts), and it is older than `keep.days`. If either setting is unset, every row is kept
 * and the result names the unset settings. One release considers at most
 * `release_max_rows` rows, oldest first; the driver runs after every `release_batch`
 * branch advances, and on request (history.release). Released rows' unreachable nodes
 * are then freed.
 *
 * The driver may run while pipelined commits are in flight (pipeline.ts). It reads the
 * durable branch records and rows only, which is safe: those commits only add rows and
 * newer versions, so every rank computed here is at most the true one, and a row released
 * now would be released with them counted too.
 */

import type { StoreContext } from "./context.ts";
import { type SweepResult, sweepNodes } from "./gc.ts";

export interface ReleaseResult {
  readonly considered: number;
  readonly released: number;
  /** Settings that are unset and so kept everything ("retention.keep.versions", …). */
  readonly unset: string[];
  readonly sweep: SweepResult | null;
}

const DAY_MS = 86_400_000;

/** How a release frees nodes: at once (the default), or started elsewhere (returns null). */
export type Sweeper = (ctx: StoreContext) => SweepResult | null;

export function release(
  ctx: StoreContext,
  now = Date.now(),
  sweep: Sweeper = sweepNodes,
): ReleaseResult {
  ctx.advancesSinceRelease = 0;
  const { settings, db } = ctx;
  const unset: string[] = [];
  if (settings.keepVersions === null) unset.push("retention.keep.versions");
  if (settings.keepDays === null) unset.push("retention.keep.days");
  if (unset.length > 0) return { considered: 0, released: 0, unset, sweep: null };
  const keepVersions = settings.keepVersions!;
  const cutoff = now - settings.keepDays! * DAY_MS;
  let considered = 0;
  const doomed: [string, string, number][] = [];
  // Materialized: lmdb-js range iterators do not nest.
  for (const { value: branch, key } of [...db.branches.getRange()]) {
    if (considered >= settings.releaseMaxRows) break;
    const [collection, name] = key;
    // A fresh options object per call: lmdb-js keeps state on the one it is given.
    const range = () => ({
      start: [collection, name, -1] as [string, string, number],
      end: [collection, name, Number.MAX_SAFE_INTEGER] as [string, string, number],
    });
    const rows = db.history.getCount(range());
    if (rows === 0) continue;
    const inRecord = 1 + branch.kept.length;
    let index = 0;
    for (const { value } of [...db.history.getRange(range())]) {
      if (considered >= settings.releaseMaxRows) break;
      considered++;
      // Rank from the head (0): newer rows and the record's versions come before it.
      const rank = inRecord + (rows - 1 - index);
      index++;
      if (rank >= keepVersions && value.time < cutoff)
        doomed.push([collection, name, value.version]);
    }
  }
  if (doomed.length === 0) return { considered, released: 0, unset, sweep: null };
  db.commit(() => {
    for (const key of doomed) db.history.removeSync(key);
  });
  return { considered, released: doomed.length, unset, sweep: sweep(ctx) };
}

/** Called after each branch advance: runs a release every `release_batch` advances. */
export function maybeRelease(
  ctx: StoreContext,
  sweep: Sweeper = sweepNodes,
): ReleaseResult | undefined {
  if (ctx.advancesSinceRelease < ctx.settings.releaseBatch) return undefined;
  return release(ctx, Date.now(), sweep);
}
