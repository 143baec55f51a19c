/**
 * The only code that touches LMDB. One environment under `data_dir` holds six tables:
 * `nodes` (address → encoded tree node), `meta`, `counters` (the version counter), `collections` (name → record),
 * `branches` ([collection, branch] → branch record) and `history` ([collection, branch,
 * version] → version record, the heads that left a branch record's window). Writes go
 * through `commit`, one synchronous LMDB transaction (fsynced before it returns), so a
 * crash at any moment leaves the last committed state and nothing half-written.
 */

import { type Database, open, type RootDatabase } from "lmdb";
import type {
  BranchRecord,
  CollectionRecord,
  MetaRecord,
  VersionRecord,
} from "../codec/records.ts";
import type { NodeStore } from "../tree/node-store.ts";

export type BranchKey = [collection: string, branch: string];
export type HistoryKey = [collection: string, branch: string, version: number];

export class StoreDatabase implements NodeStore {
  readonly root: RootDatabase;
  readonly nodes: Database<Buffer, string>;
  readonly meta: Database<MetaRecord, string>;
  readonly counters: Database<number, string>;
  readonly collections: Database<CollectionRecord, string>;
  readonly branches: Database<BranchRecord, BranchKey>;
  readonly history: Database<VersionRecord, HistoryKey>;

  constructor(dir: string) {
    this.root = open({
      path: dir,
      maxDbs: 8,
      // Every commit is fsynced before it is acknowledged.
      noSync: false,
      overlappingSync: false,
      // Nodes are already compact MessagePack; compressing them costs more than it saves.
      compression: false,
    });
    this.nodes = this.root.openDB<Buffer, string>({ name: "nodes", encoding: "binary" });
    this.meta = this.root.openDB<MetaRecord, string>({ name: "meta" });
    this.counters = this.root.openDB<number, string>({ name: "counters" });
    this.collections = this.root.openDB<CollectionRecord, string>({ name: "collections" });
    this.branches = this.root.openDB<BranchRecord, BranchKey>({ name: "branches" });
    this.history = this.root.openDB<VersionRecord, HistoryKey>({ name: "history" });
  }

  get(hash: string): Uint8Array | undefined {
    return this.nodes.getBinary(hash);
  }

  /** Runs `action` in one synchronous, durable write transaction. */
  commit<T>(action: () => T): T {
    return this.root.transactionSync(action);
  }

  putNode(hash: string, bytes: Uint8Array): void {
    this.nodes.putSync(hash, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }

  /** Bytes of pages used by the node table (what a release should make fall). */
  nodeBytes(): { entries: number; bytes: number } {
    const stats = this.nodes.getStats() as {
      entryCount: number;
      pageSize: number;
      treeBranchPageCount: number;
      treeLeafPageCount: number;
      overflowPages: number;
    };
    const pages = stats.treeBranchPageCount + stats.treeLeafPageCount + stats.overflowPages;
    return { entries: stats.entryCount, bytes: pages * stats.pageSize };
  }

  close(): Promise<void> {
    return this.root.close();
  }
}
