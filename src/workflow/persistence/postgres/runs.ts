/**
 * Runs on PostgreSQL in cluster mode: each owned shard has its own run store (the shared
 * `SqlRunStore`), scoped by a `ShardFence`: it loads only its shard's runs and outbox rows,
 * writes the shard into every row, and every commit first checks, in the same transaction,
 * that the node still holds the shard's lease at the fencing epoch it was granted
 * (`FOR SHARE`, so a takeover waits for the commit to end). A node that lost the lease cannot
 * commit to the shard: the commit fails with `shard_fenced`.
 */

import { SkeinError } from "../../../common/errors.ts";
import { SqlRunStore } from "../sql/runs.ts";
import { get, type Unit } from "../sql/unit.ts";
import type { PostgresDatabase } from "./driver.ts";

/** A shard's lease as this node holds it: the token every commit to the shard presents. */
export interface ShardFence {
  readonly shard: number;
  readonly nodeId: string;
  readonly incarnation: bigint;
  readonly epoch: bigint;
}

/** The lease row must still be this node's, at this epoch, and not expired (database clock). */
const FENCE_SQL =
  "SELECT 1 AS held FROM shard_leases WHERE shard = ? AND owner = ? AND owner_incarnation = ? " +
  "AND epoch = ? AND expires_at > clock_timestamp() FOR SHARE";

function* checkFence(fence: ShardFence): Unit<void> {
  const held = yield* get(FENCE_SQL, [
    fence.shard,
    fence.nodeId,
    fence.incarnation.toString(),
    fence.epoch.toString(),
  ]);
  if (held === undefined) {
    throw new SkeinError(
      "shard_fenced",
      `shard ${fence.shard}: this node no longer holds its lease at epoch ${fence.epoch}`,
      { status: 503 },
    );
  }
}

/** The run store of one owned shard, fenced by its lease. */
export function shardRunStore(db: PostgresDatabase, fence: ShardFence): SqlRunStore {
  return new SqlRunStore(db, { shard: fence.shard, fence: () => checkFence(fence) });
}
