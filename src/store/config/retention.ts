/**
 * The service file's `retention` object: how the release driver frees history rows. It is
 * always present in the decoded value (absent means the release defaults); `null` is
 * refused. `keep` sets the two protections a release must pass; while either is unset the
 * driver keeps every history row. The head is always kept, so `keep.versions` zero is
 * refused rather than read as "keep nothing".
 */

import {
  type Decoder,
  integer,
  map,
  nullable,
  object,
  optional,
  refine,
  u64,
  usize,
  withDefault,
} from "../../common/decode/index.ts";
import type { RetentionKeep, RetentionSettings } from "./types.ts";

export const RETENTION_DEFAULTS: RetentionSettings = {
  release_max_rows: 1024,
  release_batch: 256n,
  keep: null,
};

const keepVersions = refine(
  u64(),
  (v) => (v === 0n ? "must be at least 1, found 0 (the head is always kept)" : undefined),
  { kind: "range" },
);

const keep: Decoder<RetentionKeep> = map(
  object({
    versions: optional(nullable(keepVersions)),
    days: optional(nullable(integer("u64", { max: 36500 }))),
  }),
  (k) => ({ versions: k.versions ?? null, days: k.days ?? null }),
);

export const retention: Decoder<RetentionSettings> = map(
  object({
    release_max_rows: withDefault(
      integer("u64", { min: 1, max: 65536 }),
      RETENTION_DEFAULTS.release_max_rows,
    ),
    release_batch: withDefault(usize({ min: 1 }), RETENTION_DEFAULTS.release_batch),
    keep: optional(keep),
  }),
  (r) => ({
    release_max_rows: r.release_max_rows,
    release_batch: r.release_batch,
    keep: r.keep ?? null,
  }),
);
