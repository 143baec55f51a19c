/**
 * Exact vector search: the cosine similarity of the question with every stored window, the
 * best window per record, the k best records. It is the oracle the HNSW index is measured
 * against and the search of past versions and small sets, where building an index costs
 * more than looking at everything.
 */

/** A record's vectors: one per window. */
export interface RecordVectors {
  readonly key: string;
  readonly windows: readonly Float32Array[];
}

export interface VectorHit {
  readonly key: string;
  /** Cosine similarity of the best window, in [-1, 1]. */
  readonly score: number;
  readonly window: number;
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Keeps the k best hits seen; ties go to the smaller key, so results are deterministic. */
export class TopK {
  readonly #k: number;
  readonly #hits: VectorHit[] = [];

  constructor(k: number) {
    this.#k = k;
  }

  offer(hit: VectorHit): void {
    const hits = this.#hits;
    if (hits.length === this.#k && !better(hit, hits[hits.length - 1]!)) return;
    let at = hits.length;
    while (at > 0 && better(hit, hits[at - 1]!)) at--;
    hits.splice(at, 0, hit);
    if (hits.length > this.#k) hits.pop();
  }

  get hits(): VectorHit[] {
    return this.#hits;
  }
}

function better(a: VectorHit, b: VectorHit): boolean {
  return a.score > b.score || (a.score === b.score && a.key < b.key);
}

/** The best window of one record against the question. */
export function bestWindow(question: Float32Array, record: RecordVectors): VectorHit | undefined {
  let best: VectorHit | undefined;
  record.windows.forEach((vector, window) => {
    const score = cosine(question, vector);
    if (best === undefined || score > best.score) best = { key: record.key, score, window };
  });
  return best;
}

export function exactSearch(
  question: Float32Array,
  records: Iterable<RecordVectors>,
  k: number,
): VectorHit[] {
  const top = new TopK(k);
  for (const record of records) {
    const hit = bestWindow(question, record);
    if (hit !== undefined) top.offer(hit);
  }
  return top.hits;
}
