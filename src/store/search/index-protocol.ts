/**
 * The messages between the store's event loop (index-client.ts) and the index thread
 * (index-thread.ts), a tagged union with a request id, answered in kind. A head is named
 * by the index folder's name for its (collection, branch); the thread keeps, per head, the
 * vector table of one companion version and the HNSW index of one (not always the same).
 */

import type { Checkpoint } from "./hnsw.ts";
import type { PackedTable } from "./table.ts";

export interface IndexState {
  /** The companion version the index holds. */
  readonly version: number;
  readonly records: number;
  readonly dead: number;
  readonly wasteful: boolean;
}

export type IndexRequest = { readonly id: number } & (
  | { readonly type: "table"; readonly head: string; readonly table: PackedTable }
  | {
      readonly type: "advance";
      readonly head: string;
      readonly from: number;
      readonly to: number;
      readonly removed: readonly string[];
      /** The changed records' new vectors, as a table (version unused). */
      readonly set: PackedTable;
    }
  | {
      readonly type: "exact";
      /** Search the head's table (which must hold `version`) or a table of its own. */
      readonly head?: string;
      readonly table?: PackedTable;
      readonly version: number;
      readonly question: Float32Array;
      readonly k: number;
      readonly prefix?: string;
    }
  | {
      readonly type: "search";
      readonly head: string;
      readonly version: number;
      readonly question: Float32Array;
      readonly k: number;
    }
  | { readonly type: "build"; readonly head: string; readonly version: number }
  | {
      readonly type: "save";
      readonly head: string;
      readonly dir: string;
      readonly where: { readonly collection: string; readonly branch: string };
    }
  | {
      readonly type: "load";
      readonly head: string;
      readonly dir: string;
      readonly checkpoint: Checkpoint;
    }
  | { readonly type: "drop"; readonly head: string; readonly what: "all" | "index" }
);

export type IndexAnswer =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly message: string };

/** An answer to `exact` or `search` when the thread does not hold the version asked for. */
export const MISS = "miss";

export interface ThreadData {
  /** HNSW insert threads (hnsw.ts): 0 every core, 1 deterministic. */
  readonly insertThreads: number;
}
