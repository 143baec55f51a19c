/**
 * One branch head's HNSW index (usearch, its prebuilt native addon): each window of each
 * record is one labelled vector; the labels map back to (key, window). A record's new
 * vectors get new labels and its old ones are removed, so an index is edited in place from
 * a diff. It is checkpointed to files named by the companion version it holds, and a
 * small JSON file names the current checkpoint: written to a temporary name and renamed,
 * so a process killed while saving leaves the previous checkpoint whole (the new files are
 * orphans, deleted at the next open), and a loaded index is caught up from its version.
 */

import { randomUUID } from "node:crypto";
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import usearch, { type Index } from "usearch";
import type { VectorHit } from "./exact.ts";

/** Graph degree and search breadth: usearch's defaults are tuned for recall near 0.99. */
const CONNECTIVITY = 16;
const EXPANSION_ADD = 128;
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

export class HnswIndex {
  readonly dims: number;
  /** The companion version the index holds. */
  version: number;
  readonly #index: Index;
  readonly #labels = new Map<string, bigint[]>();
  readonly #owners = new Map<bigint, { key: string; window: number }>();
  #next = 1n;
  /** Most windows any record has: how far a search must look to find k records. */
  #mostWindows = 1;

  constructor(dims: number, version: number) {
    this.dims = dims;
    this.version = version;
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
    return this.#labels.size;
  }

  /** Sets records' vectors (replacing any they had), in one call to the addon. */
  set(records: readonly { key: string; windows: readonly Float32Array[] }[]): void {
    const labels: bigint[] = [];
    const vectors: Float32Array[] = [];
    for (const { key, windows } of records) {
      this.remove(key);
      if (windows.length === 0) continue;
      const own = windows.map((w, window) => {
        const label = this.#next++;
        this.#owners.set(label, { key, window });
        labels.push(label);
        vectors.push(w);
        return label;
      });
      this.#labels.set(key, own);
      if (windows.length > this.#mostWindows) this.#mostWindows = windows.length;
    }
    if (labels.length === 0) return;
    const matrix = new Float32Array(labels.length * this.dims);
    vectors.forEach((v, i) => {
      matrix.set(v, i * this.dims);
    });
    this.#index.add(BigUint64Array.from(labels), matrix, 0);
  }

  remove(key: string): void {
    const labels = this.#labels.get(key);
    if (labels === undefined) return;
    this.#index.remove(BigUint64Array.from(labels));
    for (const label of labels) this.#owners.delete(label);
    this.#labels.delete(key);
  }

  /** The k records nearest the question (best window each), best first. */
  search(question: Float32Array, k: number): VectorHit[] {
    const size = this.#owners.size;
    if (size === 0) return [];
    let want = Math.min(size, k * this.#mostWindows);
    for (;;) {
      const found = this.#index.search(question, want, 1);
      const hits = new Map<string, VectorHit>();
      for (let i = 0; i < found.keys.length; i++) {
        const owner = this.#owners.get(found.keys[i]!);
        if (owner === undefined || hits.has(owner.key)) continue;
        hits.set(owner.key, {
          key: owner.key,
          score: 1 - found.distances[i]!,
          window: owner.window,
        });
      }
      if (hits.size >= k || want >= size) return [...hits.values()].slice(0, k);
      want = Math.min(size, want * 2);
    }
  }

  /** Writes a checkpoint into `dir` and makes it current (`meta` renamed into place). */
  save(dir: string, name: string, where: { collection: string; branch: string }): Checkpoint {
    const stem = `${name}-${this.version}-${randomUUID().slice(0, 8)}`;
    const checkpoint: Checkpoint = {
      ...where,
      version: this.version,
      dims: this.dims,
      index: `${stem}.usearch`,
      labels: `${stem}.labels.json`,
    };
    this.#index.save(join(dir, checkpoint.index));
    const labels = [...this.#owners].map(([label, o]) => [o.key, o.window, Number(label)]);
    writeFileSync(
      join(dir, checkpoint.labels),
      JSON.stringify({ next: Number(this.#next), labels }),
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
    const { next, labels } = JSON.parse(readFileSync(join(dir, checkpoint.labels), "utf8")) as {
      next: number;
      labels: [string, number, number][];
    };
    index.#next = BigInt(next);
    for (const [key, window, label] of labels) {
      const big = BigInt(label);
      index.#owners.set(big, { key, window });
      const list = index.#labels.get(key) ?? [];
      list[window] = big;
      index.#labels.set(key, list);
      if (window + 1 > index.#mostWindows) index.#mostWindows = window + 1;
    }
    if (index.#index.size() !== index.#owners.size) {
      throw new Error(
        `checkpoint ${checkpoint.index} holds ${index.#index.size()} vectors, labels name ${index.#owners.size}`,
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
