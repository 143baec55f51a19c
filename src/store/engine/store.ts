/**
 * One open store: the engine's operations bound to one context. This is the object the
 * socket server, the in-process benchmark and `serve` hold. Every write runs the retention
 * driver's check after it commits (a release every release_batch branch advances).
 */

import { type AppendPruneResult, appendPrune } from "./append-prune.ts";
import { type BranchInfo, createBranch, deleteBranch, listBranches } from "./branches.ts";
import { type ChangesRequest, listChanges } from "./changes.ts";
import {
  type CollectionInfo,
  createCollection,
  deleteCollection,
  listCollections,
} from "./collections.ts";
import type { Receipt } from "./commit.ts";
import type { StoreContext } from "./context.ts";
import {
  type DocumentRecord,
  deleteDocuments,
  getDocument,
  listDocuments,
  putDocuments,
  type Where,
} from "./documents.ts";
import { type SweepResult, sweepNodes } from "./gc.ts";
import { beginGroup, endGroup, flushGroup } from "./group.ts";
import { type HistoryPage, listHistory } from "./history.ts";
import { checkPage, type Page } from "./paging.ts";
import { maybeRelease, type ReleaseResult, release } from "./retention.ts";

export class Store {
  readonly ctx: StoreContext;
  #closed = false;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
  }

  get shards(): number {
    return this.ctx.shards;
  }

  #page(limit: number | undefined): number {
    const max = this.ctx.settings.maxPage;
    const asked = limit ?? Math.min(100, max);
    checkPage(asked, max, "max_page");
    return asked;
  }

  /** Writes deferred commits first: every operation but put/delete/append_prune reads or
   * writes LMDB tables directly and must see them. */
  #settle(): void {
    flushGroup(this.ctx);
  }

  /** Opens a commit group (see group.ts): puts, deletes and appends defer their writes. */
  beginGroup(): void {
    beginGroup(this.ctx);
  }

  /** Writes and closes the group; false when a write failed (answer the group with errors). */
  endGroup(): boolean {
    return endGroup(this.ctx);
  }

  #advanced<T>(value: T): T {
    maybeRelease(this.ctx);
    return value;
  }

  listCollections(after?: string, limit?: number): Page<CollectionInfo> {
    this.#settle();
    return listCollections(this.ctx, after, this.#page(limit));
  }

  createCollection(name: string, author = "local"): { collection: string; receipt: Receipt } {
    this.#settle();
    return createCollection(this.ctx, name, author);
  }

  deleteCollection(name: string): SweepResult {
    this.#settle();
    deleteCollection(this.ctx, name);
    return sweepNodes(this.ctx);
  }

  listBranches(collection: string, after?: string, limit?: number): Page<BranchInfo> {
    this.#settle();
    return listBranches(this.ctx, collection, after, this.#page(limit));
  }

  createBranch(
    collection: string,
    name: string,
    from: { branch: string; version?: number | undefined } = { branch: "main" },
  ): BranchInfo {
    this.#settle();
    return createBranch(this.ctx, collection, name, { branch: from.branch, version: from.version });
  }

  deleteBranch(collection: string, name: string): SweepResult {
    this.#settle();
    deleteBranch(this.ctx, collection, name);
    return sweepNodes(this.ctx);
  }

  get(where: Where, key: string): { found: boolean; value?: unknown; version: number } {
    this.#settle();
    return getDocument(this.ctx, where, key);
  }

  put(where: Where, records: readonly DocumentRecord[], author = "local"): Receipt {
    return this.#advanced(putDocuments(this.ctx, where, records, author));
  }

  delete(where: Where, keys: readonly string[], author = "local"): Receipt {
    return this.#advanced(deleteDocuments(this.ctx, where, keys, author));
  }

  list(
    where: Where,
    options: {
      after?: string | undefined;
      prefix?: string | undefined;
      limit?: number | undefined;
    } = {},
  ): Page<DocumentRecord> & { version: number } {
    this.#settle();
    return listDocuments(this.ctx, where, {
      after: options.after,
      prefix: options.prefix,
      limit: this.#page(options.limit),
    });
  }

  appendPrune(
    where: Where,
    key: string,
    records: readonly unknown[],
    keep: number,
    author = "local",
  ): AppendPruneResult {
    return this.#advanced(appendPrune(this.ctx, where, key, records, keep, author));
  }

  history(collection: string, branch: string, before?: number, limit?: number): HistoryPage {
    this.#settle();
    return listHistory(this.ctx, collection, branch, before, this.#page(limit));
  }

  changes(request: Omit<ChangesRequest, "limit"> & { limit?: number | undefined }) {
    this.#settle();
    const limit = request.limit ?? Math.min(100, this.ctx.settings.changesMaxPage);
    return listChanges(this.ctx, { ...request, limit });
  }

  release(now?: number): ReleaseResult {
    this.#settle();
    return release(this.ctx, now);
  }

  stats(): { shards: number; next_version: number; node_entries: number; node_bytes: number } {
    this.#settle();
    const nodes = this.ctx.db.nodeBytes();
    return {
      shards: this.ctx.shards,
      next_version: this.ctx.nextVersion,
      node_entries: nodes.entries,
      node_bytes: nodes.bytes,
    };
  }

  async close(): Promise<void> {
    this.#settle();
    if (this.#closed) return;
    this.#closed = true;
    await this.ctx.db.close();
  }
}
