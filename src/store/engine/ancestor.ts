/**
 * The common ancestor of two versions, for merges and reverts. Ancestry lives in the
 * version graph (`graph` table: each version's parents), which retention never releases,
 * so the search works whatever was released. Version numbers only increase and a parent is
 * always older than its child, so the walk visits versions newest first from both sides
 * (a max-heap), carrying which side reached each; the first version reached from both is
 * the newest common ancestor (with criss-cross merges there may be several; the newest is
 * taken). The walk visits the versions made on either side since the two sides parted, and
 * at most `changes_node_budget` of them: a merge runs on the store's single queue, so a walk
 * over, say, a million versions (tens of ms per 30,000) is refused `merge_ancestor_budget`
 * rather than stalling every client. The spec has no setting of its own for this walk;
 * changes_node_budget already bounds the reads of one call (the merge's diffs among them),
 * and one graph row read per version costs about what a node load does, so one setting
 * bounds the whole merge (default 65,536: a dry-run merge walking 64,000 versions took
 * 43–50 ms, a refusal at 66,000 49–66 ms, on the shared 2-core machine at load 6–8).
 *
 * The ancestor's trees are another matter: they are read from wherever the version is
 * still retained (either branch's record, fork point or history rows, a tag, or any other
 * branch of the collection). When none holds it, the merge is refused with
 * `merge_base_released` (docs/store-model.md says what to do).
 */

import type { VersionRecord } from "../codec/records.ts";
import { storeError } from "../errors.ts";
import { branchId, type StoreContext } from "./context.ts";
import { retainedIn } from "./versions.ts";

const OURS = 1;
const THEIRS = 2;

/**
 * The newest common ancestor's version number, or null when the graph has none; refused
 * `merge_ancestor_budget` after visiting `budget` versions without finding it.
 */
export function commonAncestor(
  ctx: StoreContext,
  collection: string,
  ours: number,
  theirs: number,
  budget = ctx.settings.changesNodeBudget,
): number | null {
  if (ours === theirs) return ours;
  const sides = new Map<number, number>([
    [ours, OURS],
    [theirs, THEIRS],
  ]);
  const heap = new MaxHeap();
  heap.push(ours);
  heap.push(theirs);
  let visited = 0;
  for (let v = heap.pop(); v !== undefined; v = heap.pop()) {
    const side = sides.get(v)!;
    if (side === (OURS | THEIRS)) return v;
    if (++visited > budget) throw overBudget(ours, theirs, budget);
    for (const parent of parentsOf(ctx, collection, v) ?? []) {
      const seen = sides.get(parent);
      if (seen === undefined) heap.push(parent);
      sides.set(parent, (seen ?? 0) | side);
    }
  }
  return null;
}

function overBudget(ours: number, theirs: number, budget: number) {
  return storeError(
    "merge_ancestor_budget",
    `the common ancestor of versions ${ours} and ${theirs} is more than changes_node_budget ` +
      `(${budget}) versions back; merge the branches more often (each merge becomes the next ` +
      "one's ancestor), or raise changes_node_budget for this merge",
  );
}

/**
 * A version's parents (none for a collection's first version); undefined for a version
 * written before the store kept a version graph.
 */
export function parentsOf(
  ctx: StoreContext,
  collection: string,
  version: number,
): readonly number[] | undefined {
  return ctx.db.graph.get([collection, version]);
}

/**
 * The record of `version` wherever it is still retained in the collection: the named
 * branches first (record, fork point, history), then tags, then every other branch.
 */
export function retainedVersion(
  ctx: StoreContext,
  collection: string,
  version: number,
  branches: readonly string[],
): VersionRecord | undefined {
  const { db } = ctx;
  const inBranch = (name: string): VersionRecord | undefined => {
    const record =
      ctx.branchRecords.get(branchId(collection, name)) ?? db.branches.get([collection, name]);
    return record && retainedIn(ctx, collection, name, record, version);
  };
  for (const name of branches) {
    const found = inBranch(name);
    if (found !== undefined) return found;
  }
  for (const { value } of db.tags.getRange({
    start: [collection, ""],
    end: [collection, "\uffff"],
  })) {
    if (value.version.version === version) return value.version;
  }
  const others = [...db.branches.getKeys({ start: [collection, ""], end: [collection, "\uffff"] })];
  for (const [, name] of others) {
    if (branches.includes(name)) continue;
    const found = inBranch(name);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The ancestor's record, or `merge_base_released` when no retained version holds it. */
export function ancestorRecord(
  ctx: StoreContext,
  collection: string,
  version: number | null,
  branches: readonly string[],
): VersionRecord {
  const found = version === null ? undefined : retainedVersion(ctx, collection, version, branches);
  if (found === undefined) {
    throw storeError(
      "merge_base_released",
      version === null
        ? "the two versions have no common ancestor in the version graph"
        : `the common ancestor, version ${version}, is no longer retained; tag a version both ` +
            "sides share, or merge with a version retained on both",
    );
  }
  return found;
}

/** A binary max-heap of version numbers. */
class MaxHeap {
  readonly #items: number[] = [];

  push(value: number): void {
    const items = this.#items;
    items.push(value);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]! >= items[i]!) break;
      [items[parent], items[i]] = [items[i]!, items[parent]!];
      i = parent;
    }
  }

  pop(): number | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && items[l]! > items[m]!) m = l;
        if (r < items.length && items[r]! > items[m]!) m = r;
        if (m === i) break;
        [items[m], items[i]] = [items[i]!, items[m]!];
        i = m;
      }
    }
    return top;
  }
}
