/**
 * The exact search kernel: the dot products of a few questions with a block of a vector
 * table's rows, in WebAssembly SIMD (f32x4, four questions by two rows at a time), about ten
 * times the JavaScript loop's speed. Its sums are float32 and in another order than
 * `cosine`'s, so they only choose candidates: table.ts rescores those with `cosine`'s own
 * sums, and the answer is the JavaScript scan's to the last bit (`scanError` bounds the
 * difference). A table's matrix lives in its scanner's memory (`Scanner.place`), so the
 * kernel reads it where it is: no copy per question, and no second copy of the table.
 *
 * The module is assembled here from its bytes (no toolchain is needed to build it); its
 * one function is, in outline:
 *
 *   (func (export "dots") (param $m $rows $dims $q $nq $out $outStride i32)
 *     for r < rows step 2, for qi < nq step 4: eight f32x4 sums, q[qi + j] · m[r + o]
 *     over dims (each row and question vector loaded once for the eight), and
 *     out[(qi + j) * outStride + r + o] = the sum's four lanes added)
 */

/** Rows scanned per kernel call: a block's sums (32 questions × rows) stay in cache. */
export const BLOCK_ROWS = 2048;
/** Most questions per call (the index thread's batch). */
export const SCAN_QUESTIONS = 32;
const PAGE = 65536;
/** wasm32 addresses at most 4 GiB; a larger table is scanned by the JavaScript loop. */
const MOST_BYTES = 4 * 1024 * 1024 * 1024 - 16 * PAGE;

/**
 * The most a kernel score (the float32 dot over the float64 norms) differs from
 * `cosine`'s: float32 sums of `dims / 4` products per lane and three lane additions err
 * by at most (dims / 4 + 4) units of 2^-24 of Σ|q_i m_i|, which is at most |q| |m|
 * (Cauchy–Schwarz); doubled, for the products' own rounding and a margin.
 */
export function scanError(dims: number): number {
  return (dims / 4 + 4) * 2 ** -23;
}

// Opcodes of the few instructions the kernel uses.
const I32 = 0x7f;
const V128 = 0x7b;
const get = (i: number) => [0x20, i];
const set = (i: number) => [0x21, i];
const tee = (i: number) => [0x22, i];
const i32c = (n: number) => [0x41, n]; // n < 64: one signed LEB byte
const ADD = 0x6a;
const MUL = 0x6c;
const GE_U = 0x4f;
const SHL = 0x74;
const BLOCK = [0x02, 0x40];
const LOOP = [0x03, 0x40];
const END = 0x0b;
const brIf = (depth: number) => [0x0d, depth];
const br = (depth: number) => [0x0c, depth];
const V128_LOAD = [0xfd, 0x00, 2, 0]; // align 4, offset 0
const V128_ZERO = [0xfd, 0x0c, ...new Array<number>(16).fill(0)];
const F32X4_ADD = [0xfd, 0xe4, 0x01];
const F32X4_MUL = [0xfd, 0xe6, 0x01];
const lane = (l: number) => [0xfd, 0x1f, l];
const F32_ADD = 0x92;
const F32_STORE = [0x38, 2, 0];

// Locals: the seven parameters, then i32 r row row2 qi q0 q1 q2 q3 stride d, then v128
// a0..a3 (row r's sums) b0..b3 (row r + 1's) x y (the two rows' lanes) t (a question's).
const [M, ROWS, DIMS, Q, NQ, OUT, OUT_STRIDE] = [0, 1, 2, 3, 4, 5, 6];
const [R, ROW, ROW2, QI, Q0, STRIDE, D] = [7, 8, 9, 10, 11, 15, 16];
const [A0, B0, X, Y, T] = [17, 21, 25, 26, 27];
const I32_LOCALS = 10;
const V128_LOCALS = 11;

/** acc += t × lane, for one accumulator. */
const fma = (acc: number, lanes: number) => [
  ...get(acc),
  ...get(T),
  ...get(lanes),
  ...F32X4_MUL,
  ...F32X4_ADD,
  ...set(acc),
];

/** out[(qi + j) × outStride + r + o] = the four lanes of `acc` added. */
const store = (j: number, o: number, acc: number) => [
  ...get(OUT),
  ...get(QI),
  ...i32c(j),
  ADD,
  ...get(OUT_STRIDE),
  MUL,
  ...get(R),
  ADD,
  ...i32c(o),
  ADD,
  ...i32c(2),
  SHL,
  ADD,
  ...get(acc),
  ...lane(0),
  ...get(acc),
  ...lane(1),
  F32_ADD,
  ...get(acc),
  ...lane(2),
  ...get(acc),
  ...lane(3),
  F32_ADD,
  F32_ADD,
  ...F32_STORE,
];

function body(): number[] {
  const four = [0, 1, 2, 3];
  const sums = four.flatMap((j) => [
    ...[...get(Q0 + j), ...get(D), ADD, ...V128_LOAD, ...set(T)],
    ...fma(A0 + j, X),
    ...fma(B0 + j, Y),
  ]);
  const zero = [
    ...V128_ZERO,
    ...four.flatMap((j) => tee(A0 + j)),
    ...four.slice(1).flatMap((j) => tee(B0 + j)),
    ...set(B0),
  ];
  return [
    ...[...get(DIMS), ...i32c(2), SHL, ...set(STRIDE)],
    ...[...BLOCK, ...LOOP],
    ...[...get(R), ...get(ROWS), GE_U, ...brIf(1)],
    ...[...get(M), ...get(R), ...get(STRIDE), MUL, ADD, ...tee(ROW)],
    ...[...get(STRIDE), ADD, ...set(ROW2)],
    ...[...i32c(0), ...set(QI)],
    ...[...BLOCK, ...LOOP],
    ...[...get(QI), ...get(NQ), GE_U, ...brIf(1)],
    ...[...get(Q), ...get(QI), ...get(STRIDE), MUL, ADD, ...tee(Q0)],
    ...[...get(STRIDE), ADD, ...tee(Q0 + 1), ...get(STRIDE), ADD, ...tee(Q0 + 2)],
    ...[...get(STRIDE), ADD, ...set(Q0 + 3)],
    ...zero,
    ...[...i32c(0), ...set(D)],
    ...[...BLOCK, ...LOOP],
    ...[...get(D), ...get(STRIDE), GE_U, ...brIf(1)],
    ...[...get(ROW), ...get(D), ADD, ...V128_LOAD, ...set(X)],
    ...[...get(ROW2), ...get(D), ADD, ...V128_LOAD, ...set(Y)],
    ...sums,
    ...[...get(D), ...i32c(16), ADD, ...set(D), ...br(0)],
    ...[END, END],
    ...four.flatMap((j) => [...store(j, 0, A0 + j), ...store(j, 1, B0 + j)]),
    ...[...get(QI), ...i32c(4), ADD, ...set(QI), ...br(0)],
    ...[END, END],
    ...[...get(R), ...i32c(2), ADD, ...set(R), ...br(0)],
    ...[END, END],
    END,
  ];
}

const name = (s: string) => [s.length, ...Buffer.from(s)];
const section = (id: number, bytes: number[]) => [id, ...uleb(bytes.length), ...bytes];

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

function moduleBytes(): Uint8Array {
  const code = [2, I32_LOCALS, I32, V128_LOCALS, V128, ...body()]; // local declarations, code
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [1, 0x60, 7, I32, I32, I32, I32, I32, I32, I32, 0]),
    ...section(2, [1, ...name("env"), ...name("mem"), 0x02, 0x00, 1]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...name("dots"), 0x00, 0]),
    ...section(10, [1, ...uleb(code.length), ...code]),
  ]);
}

/** The little of the WebAssembly API used here (the project's types leave the DOM's out). */
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer };
};

let compiled: object | undefined;

type Dots = (
  m: number,
  rows: number,
  dims: number,
  q: number,
  nq: number,
  out: number,
  outStride: number,
) => void;

/**
 * A table's matrix in a kernel's memory, followed by one zero row (the kernel takes rows in
 * pairs; an odd block's last pair reads the next row, or this one), then room for a batch
 * of questions and their sums.
 */
export class Scanner {
  /** The table's matrix, a view of the kernel's memory. */
  readonly matrix: Float32Array;
  readonly #dims: number;
  readonly #dots: Dots;
  readonly #questions: Float32Array;
  readonly #out: Float32Array;
  readonly #blockRows: number;

  private constructor(matrix: Float32Array, dims: number, blockRows: number) {
    const matrixBytes = (matrix.length + dims) * 4;
    const questionBytes = SCAN_QUESTIONS * dims * 4;
    const outBytes = SCAN_QUESTIONS * (blockRows + 1) * 4;
    const bytes = matrixBytes + questionBytes + outBytes;
    const memory = new WebAssembly.Memory({ initial: Math.ceil(bytes / PAGE) });
    compiled ??= new WebAssembly.Module(moduleBytes());
    const instance = new WebAssembly.Instance(compiled, { env: { mem: memory } });
    this.#dots = instance.exports.dots as Dots;
    this.#dims = dims;
    this.#blockRows = blockRows;
    this.matrix = new Float32Array(memory.buffer, 0, matrix.length);
    this.matrix.set(matrix);
    this.#questions = new Float32Array(memory.buffer, matrixBytes, SCAN_QUESTIONS * dims);
    this.#out = new Float32Array(
      memory.buffer,
      matrixBytes + questionBytes,
      SCAN_QUESTIONS * (blockRows + 1),
    );
  }

  /**
   * A scanner holding `matrix` (copied in; the caller keeps the view), or undefined when the
   * kernel cannot take it: dimensions not a multiple of 4, or a table above wasm32's memory.
   * `mostRows` is the most rows one call must take (a record's windows are never split).
   */
  static place(matrix: Float32Array, dims: number, mostRows: number): Scanner | undefined {
    if (dims === 0 || dims % 4 !== 0) return undefined;
    const blockRows = Math.max(BLOCK_ROWS, mostRows);
    const bytes = (matrix.length + dims + SCAN_QUESTIONS * (dims + blockRows + 1)) * 4;
    if (bytes > MOST_BYTES) return undefined;
    return new Scanner(matrix, dims, blockRows);
  }

  /** Rows one call may take. */
  get blockRows(): number {
    return this.#blockRows;
  }

  /** Loads the questions (at most `SCAN_QUESTIONS`); padded to a multiple of 4 with zeros. */
  load(questions: readonly Float32Array[]): number {
    const padded = Math.ceil(questions.length / 4) * 4;
    this.#questions.fill(0, 0, padded * this.#dims);
    questions.forEach((q, i) => {
      this.#questions.set(q, i * this.#dims);
    });
    return padded;
  }

  /**
   * The float32 dot products of the loaded questions with rows [from, to) (at most
   * `blockRows`): question q's with row from + r is at `q * stride + r`, `stride` being
   * the rows rounded up to even.
   */
  dots(padded: number, from: number, to: number): { out: Float32Array; stride: number } {
    const dims = this.#dims;
    const stride = (to - from + 1) & ~1;
    this.#dots(
      from * dims * 4,
      to - from,
      dims,
      this.#questions.byteOffset,
      padded,
      this.#out.byteOffset,
      stride,
    );
    return { out: this.#out, stride };
  }
}
