/**
 * The on-disk records of the store besides tree nodes, stored MessagePack-encoded by the
 * LMDB layer. `STORE_FORMAT` is written once at creation and checked at every open, so a
 * store written by a newer format is refused rather than misread.
 */

export const STORE_FORMAT = 1;

/** Store-wide settings fixed at creation, and the version counter. */
export interface MetaRecord {
  readonly format: number;
  readonly shards: number;
  readonly cacheBytesTotal: number;
  readonly executorThreads: number;
  readonly createdAt: string;
}

export interface CollectionRecord {
  readonly name: string;
  readonly createdAt: string;
}

/** One version of a branch: its shard roots and its receipt. */
export interface VersionRecord {
  readonly version: number;
  /** Milliseconds since the epoch. */
  readonly time: number;
  readonly author: string;
  /** Tree root per shard (null: the shard is empty). */
  readonly roots: readonly (string | null)[];
}

export interface BranchRecord {
  readonly name: string;
  readonly createdAt: number;
  readonly head: VersionRecord;
  /** Previous heads, newest first, at most `kept_versions`; older ones are history rows. */
  readonly kept: readonly VersionRecord[];
}

/** Key of the store-wide version counter in the `counters` table. */
export const VERSION_KEY = "next_version";
