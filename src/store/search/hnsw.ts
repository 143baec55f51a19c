/**
 * One branch head's HNSW index (usearch, its prebuilt native addon). Each distinct vector
 * is one labelled point, shared by every (key, window) that has exactly that vector:
 * HNSW graphs lose whole clusters of identical points (their neighbour pruning keeps one
 * of many equal neighbours), and duplicate texts are common in real collections. A
 * record's new vectors are added and its old ones released, so an index is edited in
 * place from a diff. A released point stays in the graph, dead (left out of answers), until
 * the index is rebuilt: usearch's own removal frees the point's slot for the next vector
 * added, which inherits the links that led to the old one, and on clustered vectors an
 * index edited that way lost records no search could reach any more (7 to 18 of 2,000
 * after a dozen passes changing a fifth of them; 0 or 1 with dead points kept, as in a
 * fresh build). It is checkpointed to files named by the companion version it holds,
 * and a small JSON file names the current checkpoint: written to a temporary name and
 * renamed, so a process killed while saving leaves the previous checkpoint whole (the new
 * files are orphans, deleted at the next open), and a loaded index is caught up from its
 * version.
 */

import { createHash, randomUUID } from "node:crypto";
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import usearch, { type Index } from "usearch";
import type { VectorHit } from "./exact.ts";

/**
 * Graph degree and breadth when adding and searching: 64/64 gave recall@10 1.0 on 20,000
 * clustered 384-dimension vectors at half the insert cost of 128 (bench:search measures).
 */
const CONNECTIVITY = 16;
const EXPANSION_ADD = 64;
const EXPANSION_SEARCH = 64;

export interface Checkpoint {
  readonly collection: string;
  readonly branch: string;
  /** The companion version the checkpoint holds. */
  readonly version: number;
  readonly dims: number;
  /** The checkpoint's files (in the index folder). */
  readonly index: string;
  readonly labels: string;
}

/** One point of the graph: its vector's digest and the (key, window) pairs that have it. */
interface Point {
  readonly digest: string;
  readonly members: Map<string, number>;
}

function digestOf(vector: Float32Array): string {
  return createHash("sha256")
    .update(new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength))
    .digest("base64url")
    .slice(0, 22);
}

export class HnswIndex {
  readonly dims: number;
  /** The companion version the index holds. */
  version: number;
  readonly #index: Index;
  /** Per key, the label of each window. */
  readonly #keys = new Map<string, bigint[]>();
  readonly #points = new Map<bigint, Point>();
  readonly #byDigest = new Map<string, bigint>();
  #next = 1n;
  /** Points no record has any more, left in the graph (see `remove`). */
  #dead = 0;
  /** Most windows any record has: how far a search must look to find k records. */
  #mostWindows = 1;

  /** Threads per insert: 0 uses every core; 1 builds the same graph from the same inputs. */
  readonly #threads: number;

  constructor(dims: number, version: number, threads = 0) {
    this.dims = dims;
    this.version = version;
    this.#threads = threads;
    this.#index = new usearch.Index({
      dimensions: dims,
      metric: usearch.MetricKind.Cos,
      quantization: usearch.ScalarKind.F32,
      connectivity: CONNECTIVITY,
      expansion_add: EXPANSION_ADD,
      expansion_search: EXPANSION_SEARCH,
      multi: false,
    });
  }

  /** Records in the index. */
  get records(): number {
    return this.#keys.size;
  }

  /** Sets records' vectors (replacing any they had); new points go in one addon call. */
  set(records: readonly { key: string; windows: readonly Float32Array[] }[]): void {
    const labels: bigint[] = [];
    const vectors: Float32Array[] = [];
    for (const { key, windows } of records) {
      this.remove(key);
      if (windows.length === 0) continue;
      const own = windows.map((vector, window) => {
        const digest = digestOf(vector);
        let label = this.#byDigest.get(digest);
        if (label === undefined) {
          label = this.#next++;
          this.#byDigest.set(digest, label);
          this.#points.set(label, { digest, members: new Map() });
          labels.push(label);
          vectors.push(vector);
        }
        this.#points.get(label)!.members.set(key, window);
        return label;
      });
      this.#keys.set(key, own);
      if (windows.length > this.#mostWindows) this.#mostWindows = windows.length;
    }
    if (labels.length === 0) return;
    const matrix = new Float32Array(labels.length * this.dims);
    vectors.forEach((v, i) => {
      matrix.set(v, i * this.dims);
    });
    this.#index.add(BigUint64Array.from(labels), matrix, this.#threads);
  }

  /** Whether dead points outnumber live ones: then the owner rebuilds the index. */
  get wasteful(): boolean {
    return this.#dead > this.#points.size;
  }

  /** Points in the graph that no record has any more. */
  get dead(): number {
    return this.#dead;
  }

  remove(key: string): void {
    const labels = this.#keys.get(key);
    if (labels === undefined) return;
    this.#keys.delete(key);
    for (const label of labels) {
      const point = this.#points.get(label);
      if (point === undefined) continue;
      point.members.delete(key);
      if (point.members.size > 0) continue;
      this.#points.delete(label);
      this.#byDigest.delete(point.digest);
      this.#dead++;
    }
  }

  /** The k records nearest the question (best window each), best first. */
  search(question: Float32Array, k: number): VectorHit[] {
    if (this.#points.size === 0) return [];
    // Dead points are in the graph and in its answers: ask past them.
    const size = this.#points.size + this.#dead;
    let want = Math.min(size, k * this.#mostWindows);
    for (;;) {
      const found = this.#index.search(question, want, 1);
      const hits = new Map<string, VectorHit>();
      for (let i = 0; i < found.keys.length && hits.size < k; i++) {
        const point = this.#points.get(found.keys[i]!);
        if (point === undefined) continue;
        const score = 1 - found.distances[i]!;
        const members = [...point.members].sort(([a], [b]) => (a < b ? -1 : 1));
        for (const [key, window] of members) {
          if (!hits.has(key) && hits.size < k) hits.set(key, { key, score, window });
        }
      }
      if (hits.size >= k || want >= size) return [...hits.values()];
      want = Math.min(size, want * 2);
    }
  }

  /** Writes a checkpoint into `dir` and makes it current (`NAME.json` renamed into place). */
  save(dir: string, name: string, where: { collection: string; branch: string }): Checkpoint {
    const stem = `${name}-${this.version}-${randomUUID().slice(0, 8)}`;
    const checkpoint: Checkpoint = {
      collection: where.collection,
      branch: where.branch,
      version: this.version,
      dims: this.dims,
      index: `${stem}.usearch`,
      labels: `${stem}.labels.json`,
    };
    this.#index.save(join(dir, checkpoint.index));
    const points = [...this.#points].map(([label, p]) => [Number(label), p.digest, [...p.members]]);
    writeFileSync(
      join(dir, checkpoint.labels),
      JSON.stringify({ next: Number(this.#next), dead: this.#dead, points }),
    );
    const meta = join(dir, `${name}.json`);
    writeFileSync(`${meta}.tmp`, JSON.stringify(checkpoint));
    renameSync(`${meta}.tmp`, meta);
    return checkpoint;
  }

  /** The index of a checkpoint; throws when its files are missing or damaged. */
  static load(dir: string, checkpoint: Checkpoint): HnswIndex {
    const index = new HnswIndex(checkpoint.dims, checkpoint.version);
    index.#index.load(join(dir, checkpoint.index));
    const { next, dead, points } = JSON.parse(
      readFileSync(join(dir, checkpoint.labels), "utf8"),
    ) as {
      next: number;
      dead?: number;
      points: [number, string, [string, number][]][];
    };
    index.#next = BigInt(next);
    index.#dead = dead ?? 0;
    for (const [label, digest, members] of points) {
      const big = BigInt(label);
      index.#points.set(big, { digest, members: new Map(members) });
      index.#byDigest.set(digest, big);
      for (const [key, window] of members) {
        const list = index.#keys.get(key) ?? [];
        list[window] = big;
        index.#keys.set(key, list);
        if (window + 1 > index.#mostWindows) index.#mostWindows = window + 1;
      }
    }
    if (index.#index.size() !== index.#points.size + index.#dead) {
      throw new Error(
        `checkpoint ${checkpoint.index} holds ${index.#index.size()} vectors, its labels ${index.#points.size} and ${index.#dead} dead`,
      );
    }
    return index;
  }
}

/** Removes a checkpoint's files (missing ones are fine). */
export function removeCheckpointFiles(dir: string, checkpoint: Checkpoint): void {
  rmSync(join(dir, checkpoint.index), { force: true });
  rmSync(join(dir, checkpoint.labels), { force: true });
}
