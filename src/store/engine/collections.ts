/**
 * Collections: create (with its `main` branch at an empty first version), list and delete
 * (with every branch and history row; the nodes they alone held are freed by the sweep).
 */

import type { VersionRecord } from "../codec/records.ts";
import { VERSION_KEY } from "../codec/records.ts";
import { storeError } from "../errors.ts";
import { type Receipt, receiptOf, type Signed, signed } from "./commit.ts";
import type { StoreContext } from "./context.ts";
import { type Page, pageOf } from "./paging.ts";

export interface CollectionInfo {
  readonly name: string;
  readonly created_at: string;
}

export function createCollection(
  ctx: StoreContext,
  name: string,
  by: string | Signed,
): { collection: string; receipt: Receipt } {
  const { author, message } = signed(by);
  const { db } = ctx;
  if (db.collections.get(name) !== undefined) {
    throw storeError("collection_exists", `collection ${JSON.stringify(name)} already exists`);
  }
  const head: VersionRecord = {
    version: ctx.nextVersion,
    time: Date.now(),
    author,
    roots: new Array<null>(ctx.shards).fill(null),
    ...(message === undefined ? {} : { message }),
  };
  db.commit(() => {
    db.collections.putSync(name, { name, createdAt: new Date(head.time).toISOString() });
    db.branches.putSync([name, "main"], { name: "main", createdAt: head.time, head, kept: [] });
    db.graph.putSync([name, head.version], []);
    db.counters.putSync(VERSION_KEY, head.version + 1);
  });
  ctx.nextVersion = head.version + 1;
  return { collection: name, receipt: receiptOf(head) };
}

/**
 * Names with this character are the store's own (embedding registry and vectors): client
 * names refuse it, and listings leave such collections out. They are reached only through
 * the verbs of the data they belong to, so they need no placement of their own.
 */
export const INTERNAL_MARK = "~";

export function listCollections(
  ctx: StoreContext,
  after: string | undefined,
  limit: number,
): Page<CollectionInfo> {
  const rows: CollectionInfo[] = [];
  for (const { value } of ctx.db.collections.getRange({ start: after ?? "" })) {
    if (after !== undefined && value.name <= after) continue;
    if (value.name.includes(INTERNAL_MARK)) continue;
    rows.push({ name: value.name, created_at: value.createdAt });
    // One extra row tells whether a next page exists.
    if (rows.length > limit) break;
  }
  return pageOf(rows.slice(0, limit + 1), limit, (c) => c.name);
}

export function deleteCollection(ctx: StoreContext, name: string): void {
  const { db } = ctx;
  if (db.collections.get(name) === undefined) {
    throw storeError("collection_not_found", `no collection ${JSON.stringify(name)}`);
  }
  db.commit(() => {
    for (const key of db.branches.getKeys({ start: [name], end: [name, "\uffff"] })) {
      db.branches.removeSync(key);
    }
    for (const key of db.history.getKeys({ start: [name], end: [name, "\uffff"] })) {
      db.history.removeSync(key);
    }
    for (const key of db.tags.getKeys({ start: [name], end: [name, "\uffff"] })) {
      db.tags.removeSync(key);
    }
    for (const key of db.graph.getKeys({ start: [name], end: [name, Number.MAX_SAFE_INTEGER] })) {
      db.graph.removeSync(key);
    }
    db.collections.removeSync(name);
    ctx.branchRecords.clear();
  });
}
