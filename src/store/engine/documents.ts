/**
 * Records of a branch: JSON values under string keys. Reads take a branch and an optional
 * retained version; writes are commits. A list merges the shards' ordered scans into one
 * key order and pages by key.
 */

import { decodeItem, encodeValue } from "../codec/json-value.ts";
import type { Edit } from "../tree/chunker.ts";
import { getItem, scan } from "../tree/cursor.ts";
import type { Item } from "../tree/node.ts";
import {
  byShard,
  type CommitExtra,
  type Committed,
  commit,
  type Durability,
  type Receipt,
  type Signed,
} from "./commit.ts";
import type { StoreContext } from "./context.ts";
import { type Page, pageOf } from "./paging.ts";
import { type Ref, resolveRef } from "./refs.ts";
import { loadBranch } from "./versions.ts";

export interface DocumentRecord {
  readonly key: string;
  readonly value: unknown;
}

export interface Where {
  readonly collection: string;
  readonly branch: string;
  /** A version number (of `branch`), a branch name, `branch@version` or a tag. */
  readonly version?: Ref | undefined;
}

export function getDocument(
  ctx: StoreContext,
  where: Where,
  key: string,
): { found: boolean; value?: unknown; version: number } {
  // The head needs no ref resolution (the common read): no Resolved object per get.
  const version =
    where.version === undefined
      ? loadBranch(ctx, where.collection, where.branch).head
      : resolveRef(ctx, where.collection, where.branch, where.version).version;
  const shard = ctx.shardOf(key);
  const item = getItem(ctx.readers[shard]!, version.roots[shard] ?? null, key);
  if (item === undefined) return { found: false, version: version.version };
  return { found: true, value: decodeItem(item), version: version.version };
}

export function putDocuments(
  ctx: StoreContext,
  where: Where,
  records: readonly DocumentRecord[],
  author: string | Signed,
  durability: Durability,
  extra: CommitExtra = {},
): Committed<Receipt> {
  return editDocuments(ctx, where, { puts: records, deletes: [] }, author, durability, extra);
}

export function deleteDocuments(
  ctx: StoreContext,
  where: Where,
  keys: readonly string[],
  author: string | Signed,
  durability: Durability,
  extra: CommitExtra = {},
): Committed<Receipt> {
  return editDocuments(ctx, where, { puts: [], deletes: keys }, author, durability, extra);
}

/**
 * The edits of one commit: JSON values, raw byte values and deletes, every key distinct.
 * Raw bytes are stored as they are (a MessagePack bin in the node, no JSON); only the
 * store's own writers pass them (the embedding walk's vectors): every client verb writes
 * `puts`, whose values are JSON whatever they hold.
 */
export interface DocumentEdits {
  readonly puts: readonly DocumentRecord[];
  readonly bytes?: readonly (readonly [key: string, bytes: Uint8Array])[];
  readonly deletes: readonly string[];
}

/** Puts and deletes as one commit: one version, so no reader or crash sees half of it. */
export function editDocuments(
  ctx: StoreContext,
  where: Where,
  edits: DocumentEdits,
  author: string | Signed,
  durability: Durability,
  extra: CommitExtra = {},
): Committed<Receipt> {
  // Indexed loops: once per commit, likely before the optimizing compiler has this
  // function, where a for-of allocates an iterator result per record.
  const { deletes, puts, bytes = [] } = edits;
  const all: Edit[] = new Array(deletes.length + puts.length + bytes.length);
  let at = 0;
  for (let i = 0; i < deletes.length; i++) all[at++] = [deletes[i]!, undefined];
  for (let i = 0; i < puts.length; i++) {
    const record = puts[i]!;
    all[at++] = [record.key, encodeValue(record.value)];
  }
  for (let i = 0; i < bytes.length; i++) all[at++] = bytes[i]!;
  return commit(ctx, where.collection, where.branch, byShard(ctx, all), author, durability, extra);
}

/** Records with keys after `after` and starting with `prefix`, in key order. */
export function listDocuments(
  ctx: StoreContext,
  where: Where,
  options: { after: string | undefined; prefix: string | undefined; limit: number },
): Page<DocumentRecord> & { version: number } {
  const { version } = resolveRef(ctx, where.collection, where.branch, where.version);
  const prefix = options.prefix ?? "";
  // With a prefix, start at the prefix itself unless the cursor is already past it.
  const fromPrefix = prefix !== "" && (options.after === undefined || options.after < prefix);
  const bound = fromPrefix ? prefix : (options.after ?? null);
  const heads: { key: string; item: Item; it: Iterator<[string, Item]> }[] = [];
  for (let s = 0; s < ctx.shards; s++) {
    const it = scan(ctx.readers[s]!, version.roots[s] ?? null, bound, fromPrefix);
    const first = it.next();
    if (!first.done) heads.push({ key: first.value[0], item: first.value[1], it });
  }
  const rows: DocumentRecord[] = [];
  while (rows.length <= options.limit && heads.length > 0) {
    let min = 0;
    for (let i = 1; i < heads.length; i++) if (heads[i]!.key < heads[min]!.key) min = i;
    const head = heads[min]!;
    if (!head.key.startsWith(prefix)) {
      if (head.key > prefix) break;
    } else {
      rows.push({ key: head.key, value: decodeItem(head.item) });
    }
    const step = head.it.next();
    if (step.done) heads.splice(min, 1);
    else {
      head.key = step.value[0];
      head.item = step.value[1];
    }
  }
  return { ...pageOf(rows, options.limit, (r) => r.key), version: version.version };
}
