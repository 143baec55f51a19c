/**
 * One open store: the engine's operations bound to one context. This is the object the
 * socket server, the in-process benchmark and `serve` hold. Every write runs the retention
 * driver's check after it commits (a release every release_batch branch advances).
 *
 * Commits come in two forms. `put`, `delete` and `appendPrune` are synchronous: durable
 * when they return. `putPipelined`, `deletePipelined` and `appendPrunePipelined` build
 * the commit at once on the latest head (durable or not) and resolve once it is durable,
 * in commit order (pipeline.ts); the socket server uses them. Every other operation, and
 * the synchronous commits, need an idle pipeline (`idle()`): they read or write LMDB
 * directly and must neither see a commit that is not durable nor overtake one. Calling
 * them while pipelined commits are in flight is refused with `internal_error`.
 *
 * Freeing nodes after a release or a deletion runs at once by default. With `stepSweeps`
 * (the socket server sets it) it runs as a stepped sweep (sweeps.ts): one bounded step per
 * turn of the event loop, so requests are answered in between; the `…InSteps` forms of
 * the deleting verbs resolve when their sweep ends. One stepped sweep runs at a time; a
 * sweep asked for while one runs starts after it (the running one read its roots before
 * the new garbage existed), and the requests waiting then share it.
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
import { type Committed, type Receipt, type Signed, signed } from "./commit.ts";
import { branchId, type StoreContext, storeStats } from "./context.ts";
import {
  type DocumentEdits,
  type DocumentRecord,
  deleteDocuments,
  editDocuments,
  getDocument,
  listDocuments,
  putDocuments,
  type Where,
} from "./documents.ts";
import { type SweepResult, sweepNodes } from "./gc.ts";
import { type HistoryPage, listHistory } from "./history.ts";
import {
  type MergeOptions,
  type MergeResult,
  mergeBranch,
  mergeOptionsOf,
  revertVersion,
} from "./merge.ts";
import { checkPage, type Page } from "./paging.ts";
import { RecordScan } from "./record-scan.ts";
import { type Ref, type Resolved, resolveRef } from "./refs.ts";
import { deleteBranchWith, deleteCollectionWith } from "./removal.ts";
import { holdFrom, maybeRelease, type ReleaseResult, release } from "./retention.ts";
import { SteppedSweeps, SWEEP_STEP_WORK } from "./sweeps.ts";
import { createTag, deleteTag, listTags, type TagInfo, tagSource } from "./tags.ts";

export { SWEEP_STEP_WORK } from "./sweeps.ts";

export class Store {
  readonly ctx: StoreContext;
  #closed = false;
  /** Run node sweeps in steps between event-loop turns (set by the socket server). */
  stepSweeps = false;
  /** Work per step of a stepped sweep. */
  sweepStepWork = SWEEP_STEP_WORK;
  readonly #sweeps: SteppedSweeps;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
    this.#sweeps = new SteppedSweeps(ctx, {
      closed: () => this.#closed,
      stepWork: () => this.sweepStepWork,
    });
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

  /** Refuses to run while pipelined commits are in flight (see the header). */
  #requireIdle(): void {
    this.ctx.pipeline.assertIdle();
  }

  /** True while pipelined commits are neither durable nor failed. */
  get busy(): boolean {
    return this.ctx.pipeline.busy;
  }

  /** Resolves once every pipelined commit so far is durable or has failed. */
  idle(): Promise<void> {
    return this.ctx.pipeline.idle();
  }

  #advanced<T>(committed: Committed<T>): Committed<T> {
    try {
      maybeRelease(this.ctx, this.stepSweeps ? this.#sweepLater : sweepNodes);
    } catch {
      // The commit stands (it is written, or on its way): a release that could not be
      // written (a full disk) must not turn it into a refusal, nor leave its `durable`
      // unobserved. The driver runs again after the next release_batch advances, and
      // history.release reports such a failure to its caller.
    }
    return committed;
  }

  /** A pipelined commit's value, once it is durable. */
  #whenDurable<T>(committed: Committed<T>): Promise<T> {
    return this.#advanced(committed).durable.then(() => committed.value);
  }

  listCollections(after?: string, limit?: number): Page<CollectionInfo> {
    this.#requireIdle();
    return listCollections(this.ctx, after, this.#page(limit));
  }

  createCollection(
    name: string,
    author: string | Signed = "local",
  ): { collection: string; receipt: Receipt } {
    this.#requireIdle();
    return createCollection(this.ctx, name, author);
  }

  deleteCollection(name: string): SweepResult {
    this.#requireIdle();
    deleteCollection(this.ctx, name);
    return sweepNodes(this.ctx);
  }

  /** `deleteCollection` with its followers (removal.ts) and a stepped sweep. */
  deleteCollectionInSteps(name: string, followers: readonly string[] = []): Promise<SweepResult> {
    this.#requireIdle();
    deleteCollectionWith(this.ctx, name, followers);
    return this.sweepInSteps();
  }

  listBranches(collection: string, after?: string, limit?: number): Page<BranchInfo> {
    this.#requireIdle();
    return listBranches(this.ctx, collection, after, this.#page(limit));
  }

  createBranch(
    collection: string,
    name: string,
    from: { branch: string; version?: Ref | undefined } = { branch: "main" },
  ): BranchInfo {
    this.#requireIdle();
    return createBranch(this.ctx, collection, name, { branch: from.branch, version: from.version });
  }

  deleteBranch(collection: string, name: string): SweepResult {
    this.#requireIdle();
    deleteBranch(this.ctx, collection, name);
    return sweepNodes(this.ctx);
  }

  /** `deleteBranch` with the followers' branches (removal.ts) and a stepped sweep. */
  deleteBranchInSteps(
    collection: string,
    name: string,
    followers: readonly string[] = [],
  ): Promise<SweepResult> {
    this.#requireIdle();
    deleteBranchWith(this.ctx, collection, name, followers);
    return this.sweepInSteps();
  }

  /** The branch tag `name` was taken from (tags.ts); null for a branch or no tag. */
  tagBranch(collection: string, name: string): string | null {
    return tagSource(this.ctx, collection, name);
  }

  /** The version a ref names (refs.ts). */
  resolve(collection: string, branch: string, ref: Ref | undefined): Resolved {
    this.#requireIdle();
    return resolveRef(this.ctx, collection, branch, ref);
  }

  /** Merges the version `from` names into the branch `into` (merge.ts). */
  merge(
    collection: string,
    from: Ref,
    into: string,
    options: Partial<Omit<MergeOptions, "by">> & { by?: string | Signed } = {},
  ): MergeResult {
    this.#requireIdle();
    const result = mergeBranch(this.ctx, collection, from, into, mergeOptionsOf(options));
    if (result.committed) this.#advanced({ value: null, durable: Promise.resolve() });
    return result;
  }

  /** Commits the inverse of one version's changes on `branch` (merge.ts). */
  revert(
    collection: string,
    branch: string,
    version: Ref,
    options: Partial<Omit<MergeOptions, "by">> & { by?: string | Signed } = {},
  ): MergeResult {
    this.#requireIdle();
    const result = revertVersion(this.ctx, collection, branch, version, mergeOptionsOf(options));
    if (result.committed) this.#advanced({ value: null, durable: Promise.resolve() });
    return result;
  }

  createTag(
    collection: string,
    name: string,
    at: { branch?: string | undefined; version?: Ref | undefined } = {},
    by: string | Signed = "local",
  ): TagInfo {
    this.#requireIdle();
    const where = { branch: at.branch ?? "main", version: at.version };
    return createTag(this.ctx, collection, name, where, signed(by));
  }

  listTags(collection: string, after?: string, limit?: number): Page<TagInfo> {
    this.#requireIdle();
    return listTags(this.ctx, collection, after, this.#page(limit));
  }

  deleteTag(collection: string, name: string): SweepResult {
    this.#requireIdle();
    deleteTag(this.ctx, collection, name);
    return sweepNodes(this.ctx);
  }

  /** `deleteTag` with a stepped sweep: the deletion is done when this returns. */
  deleteTagInSteps(collection: string, name: string): Promise<SweepResult> {
    this.#requireIdle();
    deleteTag(this.ctx, collection, name);
    return this.sweepInSteps();
  }

  get(where: Where, key: string): { found: boolean; value?: unknown; version: number } {
    this.#requireIdle();
    return getDocument(this.ctx, where, key);
  }

  put(
    where: Where,
    records: readonly DocumentRecord[],
    author: string | Signed = "local",
  ): Receipt {
    return this.#advanced(putDocuments(this.ctx, where, records, author, "now")).value;
  }

  /** `put` through the commit pipeline: resolves with the receipt once it is durable. */
  putPipelined(
    where: Where,
    records: readonly DocumentRecord[],
    author: string | Signed = "local",
    expectHead?: number,
  ): Promise<Receipt> {
    return this.#whenDurable(
      putDocuments(this.ctx, where, records, author, "pipelined", { expectHead }),
    );
  }

  delete(where: Where, keys: readonly string[], author: string | Signed = "local"): Receipt {
    return this.#advanced(deleteDocuments(this.ctx, where, keys, author, "now")).value;
  }

  /** Puts, raw byte puts and deletes (keys distinct) in one commit. */
  edit(where: Where, edits: DocumentEdits, author: string | Signed = "local"): Receipt {
    return this.#advanced(editDocuments(this.ctx, where, edits, author, "now")).value;
  }

  /** `delete` through the commit pipeline: resolves with the receipt once it is durable. */
  deletePipelined(
    where: Where,
    keys: readonly string[],
    author: string | Signed = "local",
    expectHead?: number,
  ): Promise<Receipt> {
    return this.#whenDurable(
      deleteDocuments(this.ctx, where, keys, author, "pipelined", { expectHead }),
    );
  }

  list(
    where: Where,
    options: {
      after?: string | undefined;
      prefix?: string | undefined;
      limit?: number | undefined;
    } = {},
  ): Page<DocumentRecord> & { version: number } {
    this.#requireIdle();
    return listDocuments(this.ctx, where, {
      after: options.after,
      prefix: options.prefix,
      limit: this.#page(options.limit),
    });
  }

  /**
   * An open scan of one version's records as stored JSON text (queries). It sees the
   * version as of this call; the caller must `close` it.
   */
  scanRecords(
    where: Where,
    options: { after?: string | undefined; prefix?: string | undefined } = {},
  ): RecordScan {
    this.#requireIdle();
    return new RecordScan(this.ctx, where, { after: options.after, prefix: options.prefix });
  }

  appendPrune(
    where: Where,
    key: string,
    records: readonly unknown[],
    keep: number,
    author: string | Signed = "local",
  ): AppendPruneResult {
    return this.#advanced(appendPrune(this.ctx, where, key, records, keep, author, "now")).value;
  }

  /** `appendPrune` through the commit pipeline: resolves once the commit is durable. */
  appendPrunePipelined(
    where: Where,
    key: string,
    records: readonly unknown[],
    keep: number,
    author: string | Signed = "local",
  ): Promise<AppendPruneResult> {
    return this.#whenDurable(appendPrune(this.ctx, where, key, records, keep, author, "pipelined"));
  }

  history(collection: string, branch: string, before?: Ref, limit?: number): HistoryPage {
    this.#requireIdle();
    return listHistory(this.ctx, collection, branch, before, this.#page(limit));
  }

  changes(request: Omit<ChangesRequest, "limit"> & { limit?: number | undefined }) {
    this.#requireIdle();
    const limit = request.limit ?? Math.min(100, this.ctx.settings.changesMaxPage);
    return listChanges(this.ctx, { ...request, limit });
  }

  release(now?: number): ReleaseResult {
    this.#requireIdle();
    return release(this.ctx, now);
  }

  /** Keeps `version` of a branch and newer ones from release for `holder` (retention.ts). */
  hold(holder: string, collection: string, branch: string, version: number | undefined): void {
    holdFrom(this.ctx, holder, branchId(collection, branch), version);
  }

  /** `release` with a stepped sweep: the rows are released when this returns. */
  async releaseInSteps(now?: number): Promise<ReleaseResult> {
    this.#requireIdle();
    const result = release(this.ctx, now, () => null);
    if (result.released === 0) return result;
    return { ...result, sweep: await this.sweepInSteps() };
  }

  /**
   * Frees unreachable nodes in steps of `sweepStepWork`, one per turn of the event loop;
   * resolves with the sweep's figures. If a sweep is running, this one starts after it.
   */
  sweepInSteps(): Promise<SweepResult> {
    return this.#sweeps.run();
  }

  /** The retention driver's sweeper in stepped mode: nobody waits for the figures. */
  readonly #sweepLater = (): null => {
    this.sweepInSteps().catch(() => {
      // A failed background sweep frees nothing more; the next release sweeps again.
    });
    return null;
  };

  stats(): { shards: number; next_version: number; node_entries: number; node_bytes: number } {
    this.#requireIdle();
    return storeStats(this.ctx);
  }

  async close(): Promise<void> {
    await this.idle();
    if (this.#closed) return;
    this.#closed = true;
    await this.ctx.db.close();
  }
}
