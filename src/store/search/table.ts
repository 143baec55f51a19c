/**
 * A vector table: every window vector of one companion version, in one contiguous float32
 * matrix, rows in key order, with each row's squared norm computed once. It is what exact
 * search scans (one pass over the matrix per batch of questions, no decoding per question)
 * and what an HNSW build reads. A table is immutable: a head that moves gets a new table
 * from the old one and the diff (`advance`), so a build or a search holding the old table
 * is never disturbed. Tables cross to the index thread (index-thread.ts) as a few
 * transferable buffers (`packTable`), not as a million small objects.
 */

import { storeError } from "../errors.ts";
import { TopK, type VectorHit } from "./exact.ts";
import { SCAN_QUESTIONS, Scanner, scanError } from "./scan-kernel.ts";

/** A table as the event loop reads it: the rows without their norms. */
export interface RawTable {
  /** The companion version the table holds. */
  readonly version: number;
  readonly dims: number;
  /** Record keys, ascending (the store's order: UTF-16 code units). */
  readonly keys: readonly string[];
  /** Record i's rows are starts[i] .. starts[i + 1] − 1. */
  readonly starts: Uint32Array;
  readonly matrix: Float32Array;
}

/** A table as the index thread searches it. */
export interface VectorTable extends RawTable {
  /** Squared norm of each row, summed in the same order as `cosine` sums it. */
  readonly norms: Float64Array;
  /** 1 / √norm of each row (0 for a zero row): the kernel's scores, a product per row. */
  readonly inverse: Float64Array;
  /** The kernel holding the matrix (scan-kernel.ts); none when it cannot take the table. */
  readonly scanner: Scanner | undefined;
}

/**
 * Collects records (in key order) into a table. Buffers grow by doubling, from the rows
 * expected (a head's record count), so a head read whole is copied into place once.
 */
export class TableBuilder {
  #dims = 0;
  readonly #keys: string[] = [];
  #starts: Uint32Array;
  #matrix = new Float32Array(0);
  /** The matrix's bytes, where stored records are copied (one view, not one per record). */
  #bytes = new Uint8Array(0);
  #rows = 0;
  readonly #expected: number;

  constructor(expectedRows = 1024) {
    this.#expected = Math.max(1, expectedRows);
    this.#starts = new Uint32Array(this.#expected + 1);
  }

  add(key: string, windows: readonly Float32Array[]): void {
    if (windows.length === 0) return;
    if (this.#dims === 0) this.#dims = windows[0]!.length;
    const dims = this.#dims;
    const at = this.#reserve(key, windows.length);
    windows.forEach((vector, w) => {
      this.#matrix.set(vector, (at + w) * dims);
    });
  }

  /**
   * A record as stored: `windows` windows of little-endian float32 in `bytes` (any
   * alignment), copied into the matrix in one move: no Float32Array per record.
   */
  addBytes(key: string, windows: number, bytes: Uint8Array): void {
    if (windows === 0) return;
    const dims = this.#dims === 0 ? bytes.byteLength / 4 / windows : this.#dims;
    if (bytes.byteLength !== windows * dims * 4 || !Number.isInteger(dims) || dims === 0) {
      throw storeError(
        "internal_error",
        `the stored vectors of ${key} are ${bytes.byteLength} bytes, not ${windows} windows of ${dims} float32s`,
      );
    }
    this.#dims = dims;
    const at = this.#reserve(key, windows);
    this.#bytes.set(bytes, at * dims * 4);
  }

  /** Room for `rows` more rows, recorded as `key`'s; the first row's index. */
  #reserve(key: string, rows: number): number {
    const dims = this.#dims;
    const need = (this.#rows + rows) * dims;
    if (need > this.#matrix.length) {
      const grown = new Float32Array(
        Math.max(need, this.#matrix.length * 2, this.#expected * dims),
      );
      grown.set(this.#matrix.subarray(0, this.#rows * dims));
      this.#matrix = grown;
      this.#bytes = new Uint8Array(grown.buffer);
    }
    if (this.#keys.length + 2 > this.#starts.length) {
      const grown = new Uint32Array(this.#starts.length * 2);
      grown.set(this.#starts);
      this.#starts = grown;
    }
    const at = this.#rows;
    this.#starts[this.#keys.length] = at;
    this.#keys.push(key);
    this.#rows += rows;
    return at;
  }

  /** The table; views of the builder's buffers (no copy), so add nothing after. */
  finish(version: number): RawTable {
    const dims = this.#dims;
    const starts = this.#starts.subarray(0, this.#keys.length + 1);
    starts[this.#keys.length] = this.#rows;
    const matrix = this.#matrix.subarray(0, this.#rows * dims);
    return { version, dims, keys: this.#keys, starts, matrix };
  }
}

/**
 * The table with its row norms, its matrix moved into a scan kernel's memory: done on the
 * index thread, never on the event loop.
 */
export function withNorms(table: RawTable): VectorTable {
  const { dims, starts } = table;
  let mostRows = 0;
  for (let i = 0; i + 1 < starts.length; i++) {
    mostRows = Math.max(mostRows, starts[i + 1]! - starts[i]!);
  }
  const scanner = Scanner.place(table.matrix, dims, mostRows);
  const matrix = scanner?.matrix ?? table.matrix;
  const rows = dims === 0 ? 0 : matrix.length / dims;
  const norms = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let n = 0;
    for (let d = r * dims, end = d + dims; d < end; d++) n += matrix[d]! * matrix[d]!;
    norms[r] = n;
  }
  const inverse = norms.map((n) => (n === 0 ? 0 : 1 / Math.sqrt(n)));
  return { ...table, matrix, norms, inverse, scanner };
}

/** A record's windows as views of the table's matrix. */
export function windowsOf(table: RawTable, record: number): Float32Array[] {
  const out: Float32Array[] = [];
  for (let r = table.starts[record]!; r < table.starts[record + 1]!; r++) {
    out.push(table.matrix.subarray(r * table.dims, (r + 1) * table.dims));
  }
  return out;
}

/**
 * The table at `version`: `table` with `removed` keys gone and `set` keys (re)placed, by
 * one merge of the two key-ordered lists.
 */
export function advance(
  table: VectorTable,
  version: number,
  removed: ReadonlySet<string>,
  set: ReadonlyMap<string, readonly Float32Array[]>,
): VectorTable {
  const builder = new TableBuilder();
  const added = [...set.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  let j = 0;
  for (let i = 0; i < table.keys.length; i++) {
    const key = table.keys[i]!;
    while (j < added.length && added[j]! < key) builder.add(added[j]!, set.get(added[j++]!)!);
    if (j < added.length && added[j] === key) {
      builder.add(key, set.get(added[j++]!)!);
      continue;
    }
    if (!removed.has(key)) builder.add(key, windowsOf(table, i));
  }
  while (j < added.length) builder.add(added[j]!, set.get(added[j++]!)!);
  return withNorms(builder.finish(version));
}

/** Records [from, to) whose keys start with `prefix` (keys are sorted: one range). */
export function prefixRange(table: VectorTable, prefix: string | undefined): [number, number] {
  const keys = table.keys;
  if (prefix === undefined || prefix === "") return [0, keys.length];
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < prefix) lo = mid + 1;
    else hi = mid;
  }
  let end = lo;
  while (end < keys.length && keys[end]!.startsWith(prefix)) end++;
  return [lo, end];
}

/**
 * Exact search of several questions (`SCAN_QUESTIONS` at a time) in one pass over the
 * table's records [from, to): each row is read once for all of them. Scores are `cosine`'s
 * to the last bit (the same sums in the same order), so answers equal the record-by-record
 * oracle's, ties to the smaller key. With a kernel, its float32 scores choose the
 * candidates (every record within twice `scanError` of the k-th best kernel score: the
 * true k best are among them) and only those are scored here.
 */
export function exactTable(
  table: VectorTable,
  questions: readonly Float32Array[],
  k: number,
  range: readonly [number, number] = [0, table.keys.length],
): VectorHit[][] {
  if (questions.length > SCAN_QUESTIONS) {
    return [
      ...exactTable(table, questions.slice(0, SCAN_QUESTIONS), k, range),
      ...exactTable(table, questions.slice(SCAN_QUESTIONS), k, range),
    ];
  }
  const qNorms = questions.map((q) => {
    let n = 0;
    for (let d = 0; d < q.length; d++) n += q[d]! * q[d]!;
    return n;
  });
  const tops = questions.map(() => new TopK(k));
  if (table.scanner === undefined) {
    scanAll(table, questions, qNorms, tops, range);
  } else {
    scanKernel(table, table.scanner, questions, qNorms, k, tops, range);
  }
  return tops.map((top) => top.hits);
}

/** The JavaScript scan: every row's score, `cosine`'s sums. */
function scanAll(
  table: VectorTable,
  questions: readonly Float32Array[],
  qNorms: readonly number[],
  tops: readonly TopK[],
  range: readonly [number, number],
): void {
  const best = new Float64Array(questions.length);
  const bestWindow = new Int32Array(questions.length);
  for (let record = range[0]; record < range[1]; record++) {
    best.fill(Number.NEGATIVE_INFINITY);
    const first = table.starts[record]!;
    for (let row = first; row < table.starts[record + 1]!; row++) {
      for (let q = 0; q < questions.length; q++) {
        const score = rowScore(table, questions[q]!, qNorms[q]!, row);
        if (score > best[q]!) {
          best[q] = score;
          bestWindow[q] = row - first;
        }
      }
    }
    if (best[0] === Number.NEGATIVE_INFINITY) continue;
    const key = table.keys[record]!;
    for (let q = 0; q < questions.length; q++) {
      tops[q]!.offer({ key, score: best[q]!, window: bestWindow[q]! });
    }
  }
}

/** `cosine(question, row)`, with the norms computed once. */
function rowScore(table: VectorTable, question: Float32Array, qNorm: number, row: number): number {
  const { dims, matrix } = table;
  const base = row * dims;
  let dot = 0;
  for (let d = 0; d < dims; d++) dot += question[d]! * matrix[base + d]!;
  const nb = table.norms[row]!;
  return qNorm === 0 || nb === 0 ? 0 : dot / Math.sqrt(qNorm * nb);
}

/** The kernel's scan: candidates by float32 score, then `cosine`'s score for them. */
function scanKernel(
  table: VectorTable,
  scanner: Scanner,
  questions: readonly Float32Array[],
  qNorms: readonly number[],
  k: number,
  tops: readonly TopK[],
  range: readonly [number, number],
): void {
  const { starts, inverse } = table;
  const margin = 2 * scanError(table.dims);
  const nq = questions.length;
  const floors = questions.map(() => new Floor(k));
  const candidates = questions.map(() => [] as number[]);
  const candidateScores = questions.map(() => [] as number[]);
  const padded = scanner.load(questions);
  let record = range[0];
  while (record < range[1]) {
    const from = starts[record]!;
    const end = blockEnd(starts, record, range[1], scanner.blockRows);
    const to = starts[end]!;
    const { out, stride } = scanner.dots(padded, from, to);
    for (let q = 0; q < nq; q++) {
      const qInverse = qNorms[q] === 0 ? 0 : 1 / Math.sqrt(qNorms[q]!);
      const floor = floors[q]!;
      let least = floor.least - margin;
      const base = q * stride - from;
      for (let r = record; r < end; r++) {
        const first = starts[r]!;
        const last = starts[r + 1]!;
        let best = out[base + first]! * qInverse * inverse[first]!;
        for (let row = first + 1; row < last; row++) {
          const score = out[base + row]! * qInverse * inverse[row]!;
          if (score > best) best = score;
        }
        if (best >= least) {
          candidates[q]!.push(r);
          candidateScores[q]!.push(best);
          floor.offer(best);
          least = floor.least - margin;
        }
      }
    }
    record = end;
  }
  for (let q = 0; q < nq; q++) {
    const question = questions[q]!;
    const least = floors[q]!.least - margin;
    const scores = candidateScores[q]!;
    candidates[q]!.forEach((r, i) => {
      if (scores[i]! < least) return;
      let best = Number.NEGATIVE_INFINITY;
      let window = 0;
      for (let row = starts[r]!; row < starts[r + 1]!; row++) {
        const score = rowScore(table, question, qNorms[q]!, row);
        if (score > best) {
          best = score;
          window = row - starts[r]!;
        }
      }
      tops[q]!.offer({ key: table.keys[r]!, score: best, window });
    });
  }
}

/** The end of the block of records from `record`: whole records, at most `most` rows. */
function blockEnd(starts: Uint32Array, record: number, last: number, most: number): number {
  const limit = starts[record]! + most;
  let lo = record + 1;
  let hi = last;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid]! <= limit) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The k-th best score offered so far (−∞ before k were offered): a min-heap of k. */
class Floor {
  readonly #heap: Float64Array;
  #size = 0;

  constructor(k: number) {
    this.#heap = new Float64Array(k);
  }

  get least(): number {
    return this.#size < this.#heap.length ? Number.NEGATIVE_INFINITY : this.#heap[0]!;
  }

  offer(score: number): void {
    const heap = this.#heap;
    if (this.#size < heap.length) {
      let at = this.#size++;
      while (at > 0) {
        const parent = (at - 1) >> 1;
        if (heap[parent]! <= score) break;
        heap[at] = heap[parent]!;
        at = parent;
      }
      heap[at] = score;
      return;
    }
    if (score <= heap[0]!) return;
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && heap[child + 1]! < heap[child]!) child++;
      if (heap[child]! >= score) break;
      heap[at] = heap[child]!;
      at = child;
    }
    heap[at] = score;
  }
}

/** A table as transferable parts: the keys as one text and their lengths. */
export interface PackedTable {
  readonly version: number;
  readonly dims: number;
  readonly keyText: string;
  readonly keyLengths: Uint32Array;
  readonly starts: Uint32Array;
  readonly matrix: Float32Array;
}

export function packTable(table: RawTable): PackedTable {
  const keyLengths = Uint32Array.from(table.keys, (k) => k.length);
  const { version, dims, starts, matrix } = table;
  return { version, dims, keyText: table.keys.join(""), keyLengths, starts, matrix };
}

export function unpackTable(packed: PackedTable): VectorTable {
  const keys: string[] = [];
  let at = 0;
  for (const length of packed.keyLengths) {
    keys.push(packed.keyText.slice(at, at + length));
    at += length;
  }
  const { version, dims, starts, matrix } = packed;
  return withNorms({ version, dims, keys, starts, matrix });
}

/** The buffers of a packed table, to transfer rather than copy. */
export function transferables(packed: PackedTable): ArrayBuffer[] {
  return [packed.keyLengths, packed.starts, packed.matrix].map((a) => a.buffer as ArrayBuffer);
}
