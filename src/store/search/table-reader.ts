/**
 * Reads a companion version (or a diff of it) into a vector table (table.ts) on the
 * store's event loop, in slices of at most `SLICE_MS` between which the loop serves other requests: a head of
 * 100,000 records takes a second or more of decoding, which must never be one stall. The
 * version stays pinned while it is read (engine/record-scan.ts), so a release meanwhile
 * does not pull it away.
 */

import type { Store } from "../engine/index.ts";
import type { Change } from "./diff.ts";
import { admit } from "./heads.ts";
import { type RawTable, TableBuilder } from "./table.ts";
import { decodeStored } from "./vectors.ts";

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
      let batch: ReturnType<typeof scan.take>;
      do {
        batch = scan.take(STEP);
        for (const [key, json] of batch) builder.add(key, decodeStored(JSON.parse(json)));
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
    const windows = change.type === "removed" ? [] : decodeStored(change.to);
    // A record left without vectors (refused by the worker) leaves the table too.
    if (windows.length === 0) removed.push(change.key);
    else set.add(change.key, windows);
  }
  return { removed, set: set.finish(version) };
}
