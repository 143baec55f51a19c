/**
 * Reading a data version's records for search (the keyword side's throwaway indexes): a
 * lazy walk over the version's JSON values. The walk pins the version while it runs
 * (engine/record-scan.ts), so a release meanwhile does not pull it away. Stored vectors
 * are read into vector tables by table-reader.ts.
 */

import type { Store } from "../engine/index.ts";

/** Records read per step of a scan. */
const SCAN_BATCH = 512;

/** Every record's JSON value at a data version (optionally under a key prefix). */
export function* dataRecords(
  store: Store,
  where: { collection: string; branch: string; version: number },
  prefix?: string,
): Generator<{ key: string; value: unknown }> {
  const scan = store.scanRecords(where, { prefix });
  try {
    for (;;) {
      const batch = scan.take(SCAN_BATCH);
      if (batch.length === 0) return;
      for (const [key, json] of batch) yield { key, value: JSON.parse(json) };
    }
  } finally {
    scan.close();
  }
}
