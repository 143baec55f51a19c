/**
 * The search tests' fixture: stores served with the embedding group and the shipped worker
 * (the generated test model, whose vectors are mean word vectors, so texts sharing words
 * are near), the walk waited for, and the oracle: exact cosine search computed here from
 * `embed.texts` (the question) and `embed.vectors` (the records at a version).
 */

import assert from "node:assert/strict";
import type { StoreClient } from "../../../src/store/client/client.ts";

export {
  embedGroup,
  refusalOf,
  type Served,
  serve,
  tempRoot,
  testModel,
} from "../embed/fixture.ts";

import { until as waitUntil } from "../../support/until.ts";

/** Words the test model knows. */
export const WORDS =
  "the store branch version model vector search document question words text people work world day life time year good old great long new first last right".split(
    " ",
  );

/** A deterministic text of three to six known words. */
export function textOf(i: number): string {
  const n = 3 + (i % 4);
  return Array.from({ length: n }, (_, j) => WORDS[(i * 7 + j * 11 + j * j) % WORDS.length]).join(
    " ",
  );
}

/** Waits until the walk has embedded every branch's head of `collection`. */
export async function settled(client: StoreClient, collection: string): Promise<void> {
  for (let i = 0; i < 4800; i++) {
    const status = await client.embedStatus(collection);
    if (status.pending === 0 && status.error === null) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail("the walk did not finish");
}

export interface Hit {
  key: string;
  score: number;
  window: number;
}

const cosine = (a: number[], b: number[]) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
};

/** Exact search computed in the test from the store's own vectors of `keys` at `version`. */
export async function oracle(
  client: StoreClient,
  collection: string,
  keys: string[],
  question: string,
  k: number,
  options: { branch?: string; version?: number } = {},
): Promise<Hit[]> {
  const q = (await client.embedTexts([question], { kind: "question" })).vectors[0]![0]!;
  const hits: Hit[] = [];
  for (let at = 0; at < keys.length; at += 1024) {
    const { vectors } = await client.embedVectors(collection, keys.slice(at, at + 1024), options);
    for (const [key, windows] of Object.entries(vectors)) {
      if (windows === null) continue;
      let best: Hit | undefined;
      windows.forEach((w, window) => {
        const score = cosine(q, w);
        if (best === undefined || score > best.score) best = { key, score, window };
      });
      if (best !== undefined) hits.push(best);
    }
  }
  hits.sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : 1));
  return hits.slice(0, k);
}

/** Asserts search rows equal oracle hits: same keys in order, scores within float error. */
export function assertSameHits(rows: { key: string; score: number }[], hits: Hit[]): void {
  assert.deepEqual(
    rows.map((r) => r.key),
    hits.map((h) => h.key),
  );
  rows.forEach((r, i) => {
    assert.ok(
      Math.abs(r.score - hits[i]!.score) < 1e-6,
      `${r.key}: ${r.score} vs ${hits[i]!.score}`,
    );
  });
}

/** Waits (bounded: two minutes, as long as a walk may take here) until `predicate` holds. */
export async function until(
  predicate: () => boolean | Promise<boolean>,
  what: string,
): Promise<void> {
  await waitUntil(what, predicate, { timeoutMs: 120_000, intervalMs: 25 });
}

export interface SearchStats {
  keyword_indexes: number;
  keyword_bytes: number;
  vector_indexes: number;
  vector_records: number;
  vector_bytes: number;
  vector_builds: number;
  keyword_builds: number;
}

export async function searchStats(client: StoreClient): Promise<SearchStats> {
  const stats = (await client.call("store.stats", {})) as { search: SearchStats };
  return stats.search;
}

/** Records `{key, value: {body}}` numbered from `from`. */
export function records(from: number, count: number, shift = 0) {
  return Array.from({ length: count }, (_, i) => ({
    key: `r${String(from + i).padStart(5, "0")}`,
    value: { body: textOf(from + i + shift) },
  }));
}
