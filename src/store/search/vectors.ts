/**
 * Reading stored vectors for search: the companion version that holds a data version's
 * vectors (embed/verbs.ts's findEmbedded), and a lazy walk over that version's records,
 * each decoded into float32 windows. The walk pins the version while it runs
 * (engine/record-scan.ts), so a release meanwhile does not pull it away.
 */

import type { Store } from "../engine/index.ts";
import type { RecordVectors } from "./exact.ts";

/** Records read per step of a scan. */
const SCAN_BATCH = 512;

/** The stored `{windows, data}` of a companion record, as float32 windows. */
export function decodeStored(value: unknown): Float32Array[] {
  const { windows, data } = value as { windows: number; data: string };
  // Stored little-endian, read by copying the bytes (every platform Node runs Skein on is
  // little-endian): a copy, since a decoded Buffer need not be 4-byte aligned.
  const all = new Float32Array(new Uint8Array(Buffer.from(data, "base64")).buffer);
  const dims = all.length / windows;
  return Array.from({ length: windows }, (_, w) => all.subarray(w * dims, (w + 1) * dims));
}

/** Every record's vectors at a companion version (optionally under a key prefix). */
export function* companionRecords(
  store: Store,
  where: { collection: string; branch: string; version: number },
  prefix?: string,
): Generator<RecordVectors> {
  const scan = store.scanRecords(where, { prefix });
  try {
    for (;;) {
      const batch = scan.take(SCAN_BATCH);
      if (batch.length === 0) return;
      for (const [key, json] of batch) yield { key, windows: decodeStored(JSON.parse(json)) };
    }
  } finally {
    scan.close();
  }
}

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
