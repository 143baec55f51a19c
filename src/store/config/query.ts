/**
 * The service file's query group: six top-level fields that enable sandboxed queries
 * together. Omitting all six disables queries; giving any requires all six, and the absent
 * ones are listed in one `missing query settings` refusal. Every refusal of a query field
 * reads `query setting <field>: <reason>`, so an explicit null says which setting and why.
 * Whether the worker exists and runs is the start-up probe's business, not the decoder's.
 */

import {
  absolutePath,
  type Decoder,
  durationMs,
  optional,
  type Path,
  type RawObject,
  refuse,
  u64,
  usize,
} from "../../common/decode/index.ts";
import { withContext } from "../errors.ts";
import type { QuerySettings } from "./types.ts";

function setting<T>(decoder: Decoder<T>): Decoder<T> {
  return withContext(decoder, { prefix: "query setting", fieldLabel: true });
}

const decoders = {
  query_worker: setting(absolutePath({ reason: "query_worker must be an absolute path" })),
  query_time_ms: setting(durationMs()),
  query_memory_bytes: setting(u64({ min: 1 })),
  query_outputs_per_record: setting(u64({ min: 1 })),
  query_scan_records: setting(u64({ min: 2 })),
  query_max_running: setting(usize({ min: 1 })),
};

export const QUERY_FIELDS = Object.keys(decoders) as (keyof QuerySettings)[];

/** The group's fields as they appear at the top level of the service file (each optional). */
export const queryShape = {
  query_worker: optional(decoders.query_worker),
  query_time_ms: optional(decoders.query_time_ms),
  query_memory_bytes: optional(decoders.query_memory_bytes),
  query_outputs_per_record: optional(decoders.query_outputs_per_record),
  query_scan_records: optional(decoders.query_scan_records),
  query_max_running: optional(decoders.query_max_running),
};

/** All or nothing: refuses a partial group, listing the absent fields. */
export function inspectQueryGroup(raw: RawObject, path: Path): void {
  const present = QUERY_FIELDS.filter((f) => Object.hasOwn(raw, f));
  if (present.length === 0 || present.length === QUERY_FIELDS.length) return;
  const absent = QUERY_FIELDS.filter((f) => !Object.hasOwn(raw, f));
  refuse("missing", path, `missing query settings: ${absent.join(", ")}`);
}

type QueryFlat = { [K in keyof QuerySettings]: QuerySettings[K] | undefined };

/** The group as one value, or null when queries are disabled. */
export function collectQuery(flat: QueryFlat): QuerySettings | null {
  if (flat.query_worker === undefined) return null;
  return {
    query_worker: flat.query_worker,
    query_time_ms: flat.query_time_ms!,
    query_memory_bytes: flat.query_memory_bytes!,
    query_outputs_per_record: flat.query_outputs_per_record!,
    query_scan_records: flat.query_scan_records!,
    query_max_running: flat.query_max_running!,
  };
}
