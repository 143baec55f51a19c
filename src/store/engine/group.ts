/**
 * Commit groups: several commits written in one LMDB transaction, so they share one fsync.
 * Inside a group a commit computes its trees, advances the in-memory branch record and the
 * version counter, and defers its write; its new nodes stay readable from the group until
 * written. `flushGroup` writes everything deferred so far in one transaction. The caller
 * (the socket server) holds every answer of a group until the group's last flush has
 * committed, so no receipt and no read of a deferred commit leaves the process before it is
 * durable. If a flush fails, the in-memory state is reloaded from LMDB and the group is
 * marked broken so the caller answers its requests with an error.
 */

import { VERSION_KEY } from "../codec/records.ts";
import { storeError } from "../errors.ts";
import type { StoreContext } from "./context.ts";

export function beginGroup(ctx: StoreContext): void {
  if (ctx.group !== null) return;
  ctx.group = { actions: [], nodes: new Map(), byShard: [] };
  for (const reader of ctx.readers) reader.pending = ctx.group.nodes;
}

/** Writes the group's deferred commits now (a no-op outside a group or when none wait). */
export function flushGroup(ctx: StoreContext): void {
  const group = ctx.group;
  if (group === null || group.actions.length === 0) return;
  const actions = group.actions.splice(0);
  try {
    ctx.db.commit(() => {
      for (const action of actions) action();
    });
  } catch (error) {
    // The deferred commits are lost: forget the state they advanced.
    ctx.branchRecords.clear();
    ctx.nextVersion = ctx.db.counters.get(VERSION_KEY) ?? ctx.nextVersion;
    group.nodes.clear();
    group.byShard.length = 0;
    ctx.groupBroken = true;
    throw storeError(
      "internal_error",
      `a group commit failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  for (const [shard, node] of group.byShard) ctx.readers[shard]!.cache.set(node);
  group.byShard.length = 0;
  group.nodes.clear();
}

/** Flushes and closes the group; returns false when any flush of the group failed. */
export function endGroup(ctx: StoreContext): boolean {
  try {
    flushGroup(ctx);
  } catch {
    // Reported through the return value; groupBroken is set.
  }
  ctx.group = null;
  for (const reader of ctx.readers) reader.pending = undefined;
  const ok = !ctx.groupBroken;
  ctx.groupBroken = false;
  return ok;
}
