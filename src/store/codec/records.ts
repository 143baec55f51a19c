/**
 * The on-disk records of the store besides tree nodes, stored MessagePack-encoded by the
 * LMDB layer. `STORE_FORMAT` is written once at creation and checked at every open, so a
 * store written by a newer format is refused rather than misread.
 */

/**
 * 2: leaf items may be raw bytes (MessagePack bin), which a build of format 1 would misread.
 * A format-1 store is raised to 2 when this build opens it (its nodes read as they are), so
 * an older build refuses it from then on (`store_format`) instead of misreading it.
 */
export const STORE_FORMAT = 2;
/** Formats this build opens: the earlier one is raised to STORE_FORMAT at open. */
export const STORE_FORMATS_READ: readonly number[] = [1, 2];

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
  /** The commit message, when the committing verb gave one. */
  readonly message?: string;
  /** A merge commit's parents: the branch's previous head, then the merged version. */
  readonly parents?: readonly number[];
}

/**
 * A tag: a name for one version of a collection. It holds its own copy of the version
 * record, so the version stays readable (and its nodes kept) until the tag is deleted,
 * whatever the retention policy releases meanwhile.
 */
export interface TagRecord {
  readonly name: string;
  /** The branch the version was taken from (what a read through the tag is decided on). */
  readonly branch: string;
  readonly createdAt: number;
  readonly author: string;
  readonly message?: string;
  readonly version: VersionRecord;
}

export interface BranchRecord {
  readonly name: string;
  readonly createdAt: number;
  readonly head: VersionRecord;
  /** Previous heads, newest first, at most `kept_versions`; older ones are history rows. */
  readonly kept: readonly VersionRecord[];
  /**
   * The version the branch was created from (absent for `main` and for branches created
   * before merges existed): kept while the branch lives, so the first merge of the branch
   * finds its common ancestor whatever retention released.
   */
  readonly base?: VersionRecord;
}

/** Key of the store-wide version counter in the `counters` table. */
export const VERSION_KEY = "next_version";
