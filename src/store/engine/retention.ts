/**
 * The release driver: applies the retention policy to history rows (the heads that left a
 * branch record's kept_versions window; the record's window itself is never released here,
 * and the head is always kept). A row may be released only when both protections allow
 * it: at least `keep.versions` newer-or-equal versions of its branch remain (the head
 * counts), and it is older than `keep.days`. If either setting is unset, every row is kept
 * and the result names the unset settings. The driver runs after every `release_batch`
 * branch advances, and on request (history.release). Released rows' unreachable nodes
 * are then freed.
 *
 * One release takes at most `release_max_rows` releasable rows; protected rows do not
 * count. Both protections keep a branch's newest rows, so a branch's releasable rows are
 * its oldest ones: rows protected by `keep.versions` are skipped by count, without being
 * read, and the first row protected by age ends the branch's turn (the rows after it are
 * newer; a clock set back can only make this keep more). A version held by derived data
 * (`StoreContext.holds`: a search index's version, the start of the diff that catches it
 * up) ends the turn the same way, so it and every newer row stay. Branches take turns: a release
 * starts at the branch after the last one it released from (in (collection, branch)
 * order, wrapping around), visits each branch at most once, and within a branch goes
 * oldest first. So rows of the first branches that may not go cannot use up every
 * release, and a branch with many releasable rows, or one that keeps gaining them, cannot
 * hold the others back past one turn each. The cursor is kept in memory: after a restart
 * the turns start again at the first branch, which only reorders releases.
 *
 * The driver may run while pipelined commits are in flight (pipeline.ts). It reads the
 * durable branch records and rows only, which is safe: those commits only add rows and
 * newer versions, so every rank computed here is at most the true one, and a row released
 * now would be released with them counted too.
 */

import type { BranchRecord } from "../codec/records.ts";
import type { BranchKey, HistoryKey } from "../lmdb/database.ts";
import { branchId, type StoreContext } from "./context.ts";
import { type SweepResult, sweepNodes } from "./gc.ts";

export interface ReleaseResult {
  /** History rows read: the releasable ones, plus one protected row per branch turn ended by age. */
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
  ctx.releases.runs++;
  const { settings, db } = ctx;
  const unset: string[] = [];
  if (settings.keepVersions === null) unset.push("retention.keep.versions");
  if (settings.keepDays === null) unset.push("retention.keep.days");
  if (unset.length > 0) return { considered: 0, released: 0, unset, sweep: null };
  const policy = {
    keepVersions: settings.keepVersions!,
    cutoff: now - settings.keepDays! * DAY_MS,
  };
  let considered = 0;
  const doomed: HistoryKey[] = [];
  let last: BranchKey | undefined;
  for (const [key, branch] of branchesInTurn(ctx)) {
    const budget = settings.releaseMaxRows - doomed.length;
    if (budget <= 0) break;
    const turn = releasable(ctx, key, branch, policy, budget);
    considered += turn.read;
    if (turn.rows.length === 0) continue;
    doomed.push(...turn.rows);
    last = key;
  }
  if (doomed.length === 0) return { considered, released: 0, unset, sweep: null };
  db.commit(() => {
    for (const key of doomed) db.history.removeSync(key);
  });
  ctx.releaseCursor = last;
  ctx.releases.released += doomed.length;
  return { considered, released: doomed.length, unset, sweep: sweep(ctx) };
}

/**
 * Every branch once, starting after `ctx.releaseCursor` and wrapping around (materialized:
 * lmdb-js range iterators do not nest, and the caller reads history rows in between).
 */
function branchesInTurn(ctx: StoreContext): [BranchKey, BranchRecord][] {
  const list = [...ctx.db.branches.getRange()].map(
    ({ key, value }) => [key, value] as [BranchKey, BranchRecord],
  );
  const cursor = ctx.releaseCursor;
  if (cursor === undefined) return list;
  // The branch after the cursor's, even if that one was deleted since (names are ASCII,
  // so string order is LMDB's key order).
  const after = list.findIndex(([[c, b]]) => c > cursor[0] || (c === cursor[0] && b > cursor[1]));
  return after <= 0 ? list : [...list.slice(after), ...list.slice(0, after)];
}

/** A branch's oldest releasable history rows, at most `budget`, and how many rows were read. */
function releasable(
  ctx: StoreContext,
  [collection, name]: BranchKey,
  branch: BranchRecord,
  policy: { keepVersions: number; cutoff: number },
  budget: number,
): { rows: HistoryKey[]; read: number } {
  // A fresh options object per call: lmdb-js keeps state on the one it is given.
  const range = (limit?: number) => ({
    start: [collection, name, -1] as HistoryKey,
    end: [collection, name, Number.MAX_SAFE_INTEGER] as HistoryKey,
    ...(limit === undefined ? {} : { limit }),
  });
  const count = ctx.db.history.getCount(range());
  // The rank of a row is the number of newer-or-equal versions before it (head = 0): the
  // record's versions, then the newer rows. Rows of rank >= keep.versions are the oldest.
  const inRecord = 1 + branch.kept.length;
  const byRank = count - Math.max(0, policy.keepVersions - inRecord);
  if (byRank <= 0) return { rows: [], read: 0 };
  const held = oldestHold(ctx, collection, name);
  const rows: HistoryKey[] = [];
  let read = 0;
  for (const { value } of ctx.db.history.getRange(range(Math.min(byRank, budget)))) {
    read++;
    if (value.time >= policy.cutoff || value.version >= held) break;
    rows.push([collection, name, value.version]);
  }
  return { rows, read };
}

/** The oldest version of a branch some holder keeps (infinity when none). */
function oldestHold(ctx: StoreContext, collection: string, branch: string): number {
  const holders = ctx.holds.get(branchId(collection, branch));
  return holders === undefined ? Number.POSITIVE_INFINITY : Math.min(...holders.values());
}

/** Called after each branch advance: runs a release every `release_batch` advances. */
export function maybeRelease(
  ctx: StoreContext,
  sweep: Sweeper = sweepNodes,
): ReleaseResult | undefined {
  if (ctx.advancesSinceRelease < ctx.settings.releaseBatch) return undefined;
  return release(ctx, Date.now(), sweep);
}

/**
 * Keeps `version` of a branch, and every newer one, from release on behalf of `holder` (a
 * search index, until it has caught up past it); undefined lets go.
 */
export function holdFrom(
  ctx: StoreContext,
  holder: string,
  branch: string,
  version: number | undefined,
): void {
  let holders = ctx.holds.get(branch);
  if (version === undefined) {
    holders?.delete(holder);
    if (holders?.size === 0) ctx.holds.delete(branch);
    return;
  }
  if (holders === undefined) {
    holders = new Map();
    ctx.holds.set(branch, holders);
  }
  holders.set(holder, version);
}
