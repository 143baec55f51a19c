/**
 * One branch head's vector search state as the event loop tracks it (vector-index.ts owns
 * the heads): the companion versions of what it handed the index thread (the table, the
 * index), the index's checkpoint, the build, load or checkpoint under way, and the chain
 * that keeps changes to the head's table and index one at a time.
 */

import { createHash } from "node:crypto";
import type { Checkpoint } from "./hnsw.ts";
import type { IndexState } from "./index-protocol.ts";

export interface Head {
  readonly collection: string;
  readonly branch: string;
  /** The head's name on the thread and in its checkpoint files. */
  readonly name: string;
  /** Companion versions of the thread's table and index once the messages sent are served. */
  tableAt: number | undefined;
  index: IndexState | undefined;
  checkpoint: Checkpoint | undefined;
  savedAt: number;
  /** A build or a checkpoint load under way (no index meanwhile). */
  pending: boolean;
  /** A checkpoint or a background catch-up under way. */
  saving: boolean;
  /** Changes to the head's table and index, one at a time. */
  chain: Promise<unknown>;
}

export function headName(collection: string, branch: string): string {
  return createHash("sha256").update(`${collection}\u0000${branch}`).digest("hex").slice(0, 32);
}

export function newHead(collection: string, branch: string, name: string): Head {
  return {
    collection,
    branch,
    name,
    tableAt: undefined,
    index: undefined,
    checkpoint: undefined,
    savedAt: 0,
    pending: false,
    saving: false,
    chain: Promise.resolve(),
  };
}

/** Runs `work` after the head's earlier changes; a failure is the caller's, not the chain's. */
export function serial<T>(head: Head, work: () => Promise<T>): Promise<T> {
  const run = head.chain.then(work);
  head.chain = run.catch(() => {});
  return run;
}
