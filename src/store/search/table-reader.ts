/**
 * Reads a companion version (or a diff of it) into a vector table (table.ts) on the
 * store's event loop, in slices of at most `SLICE_MS` between which the loop serves other
 * requests: a head of 100,000 records is still a walk of every leaf, which must never be
 * one stall. Each record's stored bytes (embed/companions.ts: raw float32, or the earlier
 * base64 JSON) are copied into the table's matrix as they are, no Float32Array per record.
 * The version stays pinned while it is read (engine/record-scan.ts), so a release
 * meanwhile does not pull it away.
 */

import { storedVectors } from "../embed/companions.ts";
import type { Store } from "../engine/index.ts";
import type { Change } from "./diff.ts";
import { admit } from "./heads.ts";
import { type RawTable, TableBuilder } from "./table.ts";

/** Longest slice of reading between two turns of the event loop. */
export const SLICE_MS = 4;
/** Records read between two looks at the clock. */
const STEP = 64;

/** Yields to the event loop: sockets and timers run before the next slice. */
export const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export async function readTable(
  store: Store,
  where: { collection: string; branch: string; version: number },
  prefix?: string,
  expectedRows?: number,
): Promise<RawTable> {
  await admit(store);
  const scan = store.scanRecords(where, { prefix });
  const builder = new TableBuilder(expectedRows);
  try {
    for (;;) {
      const deadline = performance.now() + SLICE_MS;
      let batch: ReturnType<typeof scan.takeItems>;
      do {
        batch = scan.takeItems(STEP);
        for (const [key, item] of batch) {
          const { windows, bytes } = storedVectors(item);
          builder.addBytes(key, windows, bytes);
        }
      } while (batch.length === STEP && performance.now() < deadline);
      if (batch.length < STEP) return builder.finish(where.version);
      await turn();
      await admit(store);
    }
  } finally {
    scan.close();
  }
}

/** A diff as the thread applies it: the keys removed and a table of the records set. */
export function diffTable(
  diff: readonly Change[],
  version: number,
): { removed: string[]; set: RawTable } {
  const set = new TableBuilder();
  const removed: string[] = [];
  for (const change of diff) {
    const stored = change.type === "removed" ? undefined : storedVectors(change.to);
    // A record left without vectors (refused by the worker) leaves the table too.
    if (stored === undefined || stored.windows === 0) removed.push(change.key);
    else set.addBytes(change.key, stored.windows, stored.bytes);
  }
  return { removed, set: set.finish(version) };
}
