/**
 * The three-way merge of a collection's shard trees, shared by branches.merge and
 * branches.revert: each shard is merged by `mergeTrees` (tree/merge.ts) from the base's
 * root, so the work grows with the changes on both sides, not with the data; each of a
 * shard's two diffs is held to changes_node_budget. Conflicts become values with decoded
 * sides, and the strategy decides what they become: `fail` leaves them to the caller
 * (who refuses with merge_conflict), `ours` keeps the branch's side, `theirs` takes the
 * other side. At most changes_max_page conflicts are returned as values; the count is
 * always exact.
 */

import { decodeItem } from "../codec/json-value.ts";
import type { VersionRecord } from "../codec/records.ts";
import { storeError } from "../errors.ts";
import type { Edit } from "../tree/chunker.ts";
import { mergeTrees, type TreeConflict } from "../tree/merge.ts";
import { nodeBudgetRefusal } from "./changes.ts";
import type { StoreContext } from "./context.ts";

export type Strategy = "fail" | "ours" | "theirs";

/** A conflict as a value; a side where the key does not exist is absent. */
export interface Conflict {
  readonly key: string;
  readonly base?: unknown;
  readonly ours?: unknown;
  readonly theirs?: unknown;
}

export interface ThreeWay {
  /** Edits to apply to ours, by shard, each sorted by key. */
  readonly edits: Map<number, Edit[]>;
  /** How many keys take theirs' side. */
  readonly applied: number;
  readonly conflicts: Conflict[];
  readonly conflictCount: number;
  /** The first conflicting keys (for a refusal's message). */
  readonly firstKeys: string[];
  readonly loaded: number;
}

export function threeWay(
  ctx: StoreContext,
  sides: { base: VersionRecord | null; ours: VersionRecord; theirs: VersionRecord },
  strategy: Strategy,
): ThreeWay {
  const edits = new Map<number, Edit[]>();
  const conflicts: Conflict[] = [];
  const firstKeys: string[] = [];
  let conflictCount = 0;
  let applied = 0;
  let loaded = 0;
  const cap = ctx.settings.changesMaxPage;
  for (let shard = 0; shard < ctx.shards; shard++) {
    let merged: ReturnType<typeof mergeTrees>;
    try {
      merged = mergeTrees(
        ctx.readers[shard]!,
        {
          base: sides.base?.roots[shard] ?? null,
          ours: sides.ours.roots[shard] ?? null,
          theirs: sides.theirs.roots[shard] ?? null,
        },
        ctx.settings.changesNodeBudget,
      );
    } catch (error) {
      throw nodeBudgetRefusal(error, `the merge of shard ${shard}`);
    }
    loaded += merged.loaded;
    const shardEdits = merged.edits;
    conflictCount += merged.conflicts.length;
    for (const conflict of merged.conflicts) {
      if (firstKeys.length < 5) firstKeys.push(conflict.key);
      if (conflicts.length < cap) conflicts.push(asValue(conflict));
    }
    if (strategy === "theirs" && merged.conflicts.length > 0) {
      for (const c of merged.conflicts) shardEdits.push([c.key, c.theirs]);
      shardEdits.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    }
    applied += shardEdits.length;
    if (shardEdits.length > 0) edits.set(shard, shardEdits);
  }
  return { edits, applied, conflicts, conflictCount, firstKeys, loaded };
}

function asValue(conflict: TreeConflict): Conflict {
  return {
    key: conflict.key,
    ...(conflict.base === undefined ? {} : { base: decodeItem(conflict.base) }),
    ...(conflict.ours === undefined ? {} : { ours: decodeItem(conflict.ours) }),
    ...(conflict.theirs === undefined ? {} : { theirs: decodeItem(conflict.theirs) }),
  };
}

/** The refusal of a `fail` merge that met conflicts: nothing was committed. */
export function conflictRefusal(merge: ThreeWay, what: string) {
  const more = merge.conflictCount > merge.firstKeys.length ? ", …" : "";
  return storeError(
    "merge_conflict",
    `${what}: ${merge.conflictCount} conflicting key(s) (${merge.firstKeys
      .map((k) => JSON.stringify(k))
      .join(", ")}${more}); nothing was committed. Preview them with dry_run, or choose ` +
      "strategy ours or theirs",
  );
}
