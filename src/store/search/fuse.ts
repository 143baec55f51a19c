/**
 * Hybrid ranking: reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009). Each
 * key scores the sum, over the rankings that hold it, of 1 / (RRF_K + rank), rank counted
 * from 1. Ranks, not scores, are fused, so a cosine similarity and a BM25 score need no
 * common scale; the constant damps the weight of the very first ranks so a key ranked well
 * by both beats a key ranked first by one alone.
 */

/** The fusion constant: 60, the value of the paper and of most engines since. */
export const RRF_K = 60;

export interface Ranked {
  readonly key: string;
  readonly window?: number | undefined;
}

/**
 * Fuses rankings (best first) into one, best first; ties keep the order of first
 * appearance (the vector ranking's, as it is given first). The window shown is the first
 * ranking's that has one.
 */
export function fuseRanks(
  rankings: readonly (readonly Ranked[])[],
  k: number,
): { key: string; score: number; window?: number }[] {
  const fused = new Map<string, { score: number; window?: number | undefined; order: number }>();
  for (const ranking of rankings) {
    ranking.forEach((row, i) => {
      const add = 1 / (RRF_K + i + 1);
      const seen = fused.get(row.key);
      if (seen === undefined) {
        fused.set(row.key, { score: add, window: row.window, order: fused.size });
      } else {
        seen.score += add;
        seen.window ??= row.window;
      }
    });
  }
  return [...fused]
    .sort(([, a], [, b]) => b.score - a.score || a.order - b.order)
    .slice(0, k)
    .map(([key, { score, window }]) =>
      window === undefined ? { key, score } : { key, score, window },
    );
}
