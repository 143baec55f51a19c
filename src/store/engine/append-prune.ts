/**
 * document.append_prune: a document as an ordered log (an agent's memory). Entries live
 * under `KEY NUL SEQ` (SEQ a 16-digit sequence number, so key order is log order) in the
 * document's own shard; one call appends its records and removes the oldest entries beyond
 * `keep`, at most append_prune_removal_cap of them, in one commit. `keep` above
 * append_prune_keep_ceiling is refused with `append_prune_keep_limit`.
 */

import { encodeValue } from "../codec/json-value.ts";
import { storeError } from "../errors.ts";
import type { Edit } from "../tree/chunker.ts";
import { scan } from "../tree/cursor.ts";
import { type Committed, commit, type Durability, type Receipt, type Signed } from "./commit.ts";
import type { StoreContext } from "./context.ts";
import type { Where } from "./documents.ts";
import { resolveVersion } from "./versions.ts";

const SEQ_DIGITS = 16;

export function logKey(key: string, seq: number): string {
  return `${key}\u0000${String(seq).padStart(SEQ_DIGITS, "0")}`;
}

export interface AppendPruneResult {
  readonly receipt: Receipt;
  readonly appended: number;
  readonly removed: number;
  /** Entries in the log after the call. */
  readonly length: number;
  /** Sequence numbers of the first and last entries kept (null when empty). */
  readonly first: number | null;
  readonly last: number | null;
}

export function appendPrune(
  ctx: StoreContext,
  where: Where,
  key: string,
  records: readonly unknown[],
  keep: number,
  author: string | Signed,
  durability: Durability,
): Committed<AppendPruneResult> {
  const { settings } = ctx;
  if (keep > settings.appendPruneKeepCeiling) {
    throw storeError(
      "append_prune_keep_limit",
      `keep ${keep} is above append_prune_keep_ceiling (${settings.appendPruneKeepCeiling})`,
    );
  }
  const head = resolveVersion(ctx, where.collection, where.branch, undefined);
  const shard = ctx.shardOf(key);
  const prefix = `${key}\u0000`;
  const existing: string[] = [];
  for (const [k] of scan(ctx.readers[shard]!, head.roots[shard] ?? null, prefix, true)) {
    if (!k.startsWith(prefix)) break;
    existing.push(k);
  }
  const lastSeq =
    existing.length === 0 ? 0 : Number(existing[existing.length - 1]!.slice(prefix.length));
  const appended = records.map(
    (value, i) => [logKey(key, lastSeq + 1 + i), encodeValue(value)] as const,
  );
  const total = existing.length + appended.length;
  const removed = Math.min(Math.max(0, total - keep), settings.appendPruneRemovalCap);
  const edits: Edit[] = [];
  for (let i = 0; i < Math.min(removed, existing.length); i++)
    edits.push([existing[i]!, undefined]);
  // When more is appended than kept, the oldest new entries are the ones not written.
  for (let i = Math.max(0, removed - existing.length); i < appended.length; i++)
    edits.push(appended[i]!);
  const { value: receipt, durable } = commit(
    ctx,
    where.collection,
    where.branch,
    new Map([[shard, edits]]),
    author,
    durability,
  );
  const all = [...existing, ...appended.map(([k]) => k)].slice(removed);
  const seqOf = (k: string | undefined) =>
    k === undefined ? null : Number(k.slice(prefix.length));
  const value: AppendPruneResult = {
    receipt,
    appended: appended.length,
    removed,
    length: all.length,
    first: seqOf(all[0]),
    last: seqOf(all[all.length - 1]),
  };
  return { value, durable };
}
