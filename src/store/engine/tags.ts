/**
 * Tags: a name for one version of a collection (a release, a reviewed state, the point an
 * agent started from). A tag holds its own copy of the version record, so the version stays
 * readable through the tag, and its nodes stay on disk, until the tag is deleted, whatever
 * the retention policy releases from the branch's history meanwhile. Tags never move:
 * creating one that exists is `tag_exists`.
 */

import type { TagRecord } from "../codec/records.ts";
import { storeError } from "../errors.ts";
import { type Receipt, receiptOf, type Signed } from "./commit.ts";
import type { StoreContext } from "./context.ts";
import { namedPage, type Page } from "./paging.ts";
import { type Ref, resolveRef } from "./refs.ts";

export interface TagInfo {
  readonly name: string;
  /** The version the tag names, as its receipt. */
  readonly version: Receipt;
  readonly branch: string;
  readonly created_at: string;
  readonly author: string;
  readonly message?: string;
}

export function tagInfo(tag: TagRecord): TagInfo {
  return {
    name: tag.name,
    version: receiptOf(tag.version),
    branch: tag.branch,
    created_at: new Date(tag.createdAt).toISOString(),
    author: tag.author,
    ...(tag.message === undefined ? {} : { message: tag.message }),
  };
}

export function createTag(
  ctx: StoreContext,
  collection: string,
  name: string,
  at: { branch: string; version: Ref | undefined },
  by: Signed,
): TagInfo {
  const resolved = resolveRef(ctx, collection, at.branch, at.version);
  const { db } = ctx;
  if (db.tags.get([collection, name]) !== undefined) {
    throw storeError("tag_exists", `tag ${JSON.stringify(name)} already exists`);
  }
  const tag: TagRecord = {
    name,
    branch: resolved.branch,
    createdAt: Date.now(),
    author: by.author,
    ...(by.message === undefined ? {} : { message: by.message }),
    version: resolved.version,
  };
  db.commit(() => {
    db.tags.putSync([collection, name], tag);
  });
  return tagInfo(tag);
}

export function listTags(
  ctx: StoreContext,
  collection: string,
  after: string | undefined,
  limit: number,
): Page<TagInfo> {
  return namedPage(ctx, ctx.db.tags, { collection, after, limit }, tagInfo);
}

/** Deletes a tag; the caller frees the nodes only it held. */
export function deleteTag(ctx: StoreContext, collection: string, name: string): void {
  const { db } = ctx;
  if (db.tags.get([collection, name]) === undefined) {
    if (db.collections.get(collection) === undefined) {
      throw storeError("collection_not_found", `no collection ${JSON.stringify(collection)}`);
    }
    throw storeError("ref_not_found", `no tag ${JSON.stringify(name)}`);
  }
  db.commit(() => {
    db.tags.removeSync([collection, name]);
  });
}

/**
 * The branch a tag was taken from, when `name` is a tag and no branch (what an access
 * decision on a read through the tag is made on). Tags are written synchronously, so this
 * reads durable state even while commits are in flight.
 */
export function tagSource(ctx: StoreContext, collection: string, name: string): string | null {
  if (ctx.db.branches.get([collection, name]) !== undefined) return null;
  return ctx.db.tags.get([collection, name])?.branch ?? null;
}
