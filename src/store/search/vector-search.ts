/**
 * The vector side of the search service: the vectors of the version a search asks for,
 * and the nearest of them to the question. The walk (embed/) may not have embedded that
 * version yet, so a search waits for it at most `EMBED_WAIT_MS` and is then refused
 * (`embed_version_not_embedded`). At the head, with no prefix and without `exact`, the
 * HNSW index (vector-index.ts) answers when the branch has one; otherwise exact search
 * over the stored vectors of the companion version. It lives apart from service.ts so the
 * service reads as the plan of a search (resolve, embed, rank, fuse) and this waiting and
 * choosing stays next to the vector indexes it serves.
 */

import { companionMarker } from "../embed/companions.ts";
import { companionOf } from "../embed/fields.ts";
import { findEmbedded } from "../embed/verbs.ts";
import type { Store } from "../engine/index.ts";
import { storeError } from "../errors.ts";
import type { VectorHit } from "./exact.ts";
import { admit, embeddedHead, headVersion } from "./heads.ts";
import type { VectorIndexes } from "./vector-index.ts";

/** How long a search waits for the walk to embed the version it asks for. */
export const EMBED_WAIT_MS = 10_000;

/** What a vector search asks: the fields of SearchArgs it reads. */
export interface VectorQuery {
  readonly collection: string;
  readonly branch: string;
  readonly prefix?: string | undefined;
  readonly exact: boolean;
}

/** The `depth` records nearest to `question` at `version`. */
export async function vectorHits(
  store: Store,
  indexes: VectorIndexes,
  query: VectorQuery,
  version: number,
  question: Float32Array,
  depth: number,
): Promise<VectorHit[]> {
  const found = await embedded(store, query.collection, query.branch, version);
  if (found === undefined) return [];
  const { collection, branch } = query;
  const head =
    version === headVersion(store, collection, branch)
      ? embeddedHead(store, collection, branch)
      : undefined;
  const where = { collection, branch, version: found.companion, prefix: query.prefix };
  const atHead = head?.companion === found.companion;
  if (atHead && !query.exact && query.prefix === undefined) {
    const hits = await indexes.search(
      collection,
      branch,
      found.companion,
      head.count,
      question,
      depth,
    );
    if (hits !== undefined) return hits;
  }
  return indexes.exact(where, question, depth, atHead);
}

/**
 * The companion version of `version`'s vectors, waiting for the walk if it is behind;
 * undefined when the version holds no records, whose vectors are none whether or not the
 * walk passed it (the first version of a collection, one after every record was deleted).
 */
async function embedded(
  store: Store,
  collection: string,
  branch: string,
  version: number,
): Promise<{ companion: number; data: number } | undefined> {
  const companion = companionOf(collection);
  const deadline = performance.now() + EMBED_WAIT_MS;
  let empty: boolean | undefined;
  for (;;) {
    // Most searches are at the head, whose vectors are the companion's head: one row.
    const head = embeddedHead(store, collection, branch);
    if (head?.data === version) return head;
    const found = findEmbedded(store, companion, branch, version);
    if (found !== undefined) return found;
    empty ??= holdsNoRecords(store, { collection, branch, version });
    if (empty) return undefined;
    const marker = companionMarker(store, companion, branch);
    const past = marker !== undefined && marker.branch === branch && marker.at > version;
    if (past || performance.now() >= deadline) {
      throw storeError(
        "embed_version_not_embedded",
        past
          ? `${collection}/${branch} keeps no vectors of version ${version}`
          : `${collection}/${branch}: the walk has not embedded version ${version} within ${EMBED_WAIT_MS} ms (it is at ${marker?.branch === branch ? marker.at : "none"})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
    await admit(store);
  }
}

function holdsNoRecords(
  store: Store,
  where: { collection: string; branch: string; version: number },
): boolean {
  const scan = store.scanRecords(where);
  try {
    return scan.take(1).length === 0;
  } finally {
    scan.close();
  }
}
