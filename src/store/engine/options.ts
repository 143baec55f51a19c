/**
 * The engine's settings, named after the service file's fields so the configuration layer
 * maps onto them one for one. Counts arrive as number or bigint (the config decoders give
 * u64 and usize fields as bigint); the engine turns them into numbers, saturating at
 * Number.MAX_SAFE_INTEGER, which no real bound reaches.
 */

export type Count = number | bigint;

export interface RetentionOptions {
  /** retention.release_max_rows */
  readonly releaseMaxRows: Count;
  /** retention.release_batch */
  readonly releaseBatch: Count;
  /** retention.keep; undefined when the keep object is absent. */
  readonly keep:
    | {
        /** retention.keep.versions (null: unset) */
        readonly versions: Count | null;
        /** retention.keep.days (null: unset) */
        readonly days: Count | null;
      }
    | undefined;
}

export interface StoreEngineOptions {
  /** data_dir */
  readonly dataDir: string;
  /** branch_cache_bytes_per_shard */
  readonly branchCacheBytesPerShard: Count;
  /** max_page */
  readonly maxPage: Count;
  /** kept_versions (default 64) */
  readonly keptVersions: Count;
  /** retention */
  readonly retention: RetentionOptions;
  /** append_prune_keep_ceiling (default 4096) */
  readonly appendPruneKeepCeiling: Count;
  /** append_prune_removal_cap (default 64) */
  readonly appendPruneRemovalCap: Count;
  /** changes_scan_records (default 10000) */
  readonly changesScanRecords: Count;
  /** changes_node_budget (default 65536) */
  readonly changesNodeBudget: Count;
  /** changes_max_page (default 1000) */
  readonly changesMaxPage: Count;
}

/** The `create` object of the service file, used once by createStore. */
export interface StoreCreateOptions {
  /** create.shards */
  readonly shards: Count;
  /** create.cache_bytes_total */
  readonly cacheBytesTotal: Count;
  /** create.executor_threads */
  readonly executorThreads: Count;
}

/** The spec's defaults for the optional fields, for callers and tests. */
export const ENGINE_DEFAULTS = {
  keptVersions: 64,
  appendPruneKeepCeiling: 4096,
  appendPruneRemovalCap: 64,
  changesScanRecords: 10000,
  changesNodeBudget: 65536,
  changesMaxPage: 1000,
  retention: { releaseMaxRows: 1024, releaseBatch: 256, keep: undefined },
} as const;

export function count(value: Count): number {
  return typeof value === "number"
    ? value
    : Number(value > 9007199254740991n ? 9007199254740991n : value);
}

/** Settings resolved to numbers, as the engine uses them. */
export interface EngineSettings {
  readonly branchCacheBytesPerShard: number;
  readonly maxPage: number;
  readonly keptVersions: number;
  readonly releaseMaxRows: number;
  readonly releaseBatch: number;
  readonly keepVersions: number | null;
  readonly keepDays: number | null;
  readonly appendPruneKeepCeiling: number;
  readonly appendPruneRemovalCap: number;
  readonly changesScanRecords: number;
  readonly changesNodeBudget: number;
  readonly changesMaxPage: number;
}

export function resolveSettings(options: StoreEngineOptions): EngineSettings {
  const keep = options.retention.keep;
  return {
    branchCacheBytesPerShard: count(options.branchCacheBytesPerShard),
    maxPage: count(options.maxPage),
    keptVersions: count(options.keptVersions),
    releaseMaxRows: count(options.retention.releaseMaxRows),
    releaseBatch: count(options.retention.releaseBatch),
    keepVersions: keep?.versions == null ? null : count(keep.versions),
    keepDays: keep?.days == null ? null : count(keep.days),
    appendPruneKeepCeiling: count(options.appendPruneKeepCeiling),
    appendPruneRemovalCap: count(options.appendPruneRemovalCap),
    changesScanRecords: count(options.changesScanRecords),
    changesNodeBudget: count(options.changesNodeBudget),
    changesMaxPage: count(options.changesMaxPage),
  };
}
