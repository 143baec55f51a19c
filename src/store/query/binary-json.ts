/**
 * A batch's records in QuickJS's own binary object format (the one `JS_ReadObject` reads,
 * quickjs-emscripten's `decodeBinaryJSON`), transcoded by the worker straight from the
 * batch's JSON bytes, so the sandbox builds the records without parsing text. QuickJS's
 * `JSON.parse` was most of a record's cost in the sandbox: it tokenizes every byte and
 * looks every property name up in the atom table once per record, where this format names
 * each distinct key once per batch (the atom table at its head), carries strings as
 * ready-made Latin-1 or UTF-16 units and numbers as int32 or float64. QuickJS reads it
 * about three times faster than the text, and the transcoding is one pass over the bytes
 * (no host objects are made, only the strings that hold an escape or a non-ASCII byte).
 *
 * Only the tags JSON values need are written: null, booleans, int32, float64, string,
 * object and array (`BC_TAG_*` of quickjs.c, format version `BC_VERSION` 5). The sandbox
 * reads it with no flags: no bytecode, no shared memory and no object references can be
 * read, and the transcoder writes nothing else. The values QuickJS builds are those its
 * `JSON.parse` builds from the same text: numbers are read by the ECMAScript rules both
 * engines follow exactly (-0 stays -0), strings with escapes or non-ASCII text are decoded
 * by `JSON.parse` itself, and keys are defined in the text's order (QuickJS orders integer
 * keys first whatever their insertion order, and a repeated key keeps its first place and
 * its last value, as in `JSON.parse`). Text that is not JSON, or nests deeper than the
 * transcoder's stack, is not transcoded (`transcode` gives undefined): the sandbox then
 * parses it as before, and its refusal is the same. The QuickJS this format belongs to is
 * pinned in package.json; test/store/query/binary-json.test.ts compares what the sandbox
 * builds from it with what its `JSON.parse` builds from the same text.
 */

/** The format version of the pinned QuickJS (quickjs.c, BC_VERSION). */
const BC_VERSION = 5;
const TAG_NULL = 1;
const TAG_FALSE = 3;
const TAG_TRUE = 4;
const TAG_INT32 = 5;
const TAG_FLOAT64 = 6;
const TAG_STRING = 7;
const TAG_OBJECT = 8;
const TAG_ARRAY = 9;
/**
 * Index of the first atom of the table in an atom reference (`first_atom` when bytecode is
 * not read: QuickJS's own atoms are not referred to by number).
 */
const FIRST_ATOM = 1;
/**
 * Bytes of the LEB128 count written before an object's or an array's members: the count is
 * known only after them, so its room is kept at full width (QuickJS reads a padded LEB128).
 */
const COUNT_BYTES = 5;
/** Raw strings shorter than this are copied by a loop here; longer ones by the buffer's copy. */
const SHORT_COPY = 32;
/**
 * Largest buffer a transcoder keeps between batches: a batch of the bench's records needs
 * about 130 KB; one of a few huge records may need far more, once.
 */
const KEEP_BYTES = 4 << 20;
/** Key slots kept between batches (a batch of many distinct keys grows the table, once). */
const KEEP_SLOTS = 1 << 12;
/** Decimal digits that always fit an int32 (a longer integer is read as a double). */
const INT_DIGITS = 9;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/** The text is not JSON as the transcoder reads it: the sandbox parses it instead. */
class NotTranscoded extends Error {}
const notTranscoded = new NotTranscoded("not transcoded");

/** Growable output bytes with the writes the format needs. */
class Output {
  bytes = Buffer.allocUnsafe(1 << 12);
  view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
  at = 0;

  /** Empties it; a buffer grown past KEEP_BYTES by an unusual batch is not kept. */
  reset(): void {
    this.at = 0;
    if (this.bytes.length <= KEEP_BYTES) return;
    this.bytes = Buffer.allocUnsafe(1 << 12);
    this.view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
  }

  reserve(count: number): void {
    if (this.at + count <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.at + count));
    this.bytes.copy(grown, 0, 0, this.at);
    this.bytes = grown;
    this.view = new DataView(grown.buffer, grown.byteOffset, grown.byteLength);
  }

  /** An unsigned LEB128 (room reserved by the caller: at most five bytes). */
  leb(value: number): void {
    let v = value >>> 0;
    while (v >= 0x80) {
      this.bytes[this.at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.bytes[this.at++] = v;
  }

  /** A number as QuickJS's JSON.parse holds it: an int32 when it is one (not -0), else a double. */
  number(value: number): void {
    this.reserve(9);
    if ((value | 0) === value && !(value === 0 && 1 / value < 0)) {
      this.bytes[this.at++] = TAG_INT32;
      // Signed: zigzag, then LEB128.
      this.leb(((value << 1) ^ (value >> 31)) >>> 0);
    } else {
      this.bytes[this.at++] = TAG_FLOAT64;
      this.view.setFloat64(this.at, value, true);
      this.at += 8;
    }
  }

  /** A string's length and width (`length << 1 | wide`), then its units. */
  string(text: string): void {
    const length = text.length;
    this.reserve(COUNT_BYTES + 2 * length);
    for (let i = 0; i < length; i++) {
      if (text.charCodeAt(i) > 0xff) {
        // UTF-16, little-endian as the sandbox's memory is.
        this.leb((length << 1) | 1);
        this.at += this.bytes.write(text, this.at, 2 * length, "utf16le");
        return;
      }
    }
    this.leb(length << 1);
    this.at += this.bytes.write(text, this.at, length, "latin1");
  }
}

/**
 * Transcodes batches. One transcoder serves a worker: its buffers and its table of keys
 * are kept between batches (emptied at each), so a batch allocates almost nothing.
 */
export class BinaryJsonWriter {
  readonly #body = new Output();
  readonly #head = new Output();
  #src: Buffer = Buffer.alloc(0);
  #pos = 0;
  #plain = true;
  #start = 0;
  // The batch's distinct keys, by their raw bytes in the text: an open-addressing table of
  // entry numbers (0 empty), and each entry's start, length and hash.
  #slots = new Int32Array(256);
  #starts: number[] = [];
  #lengths: number[] = [];
  #hashes: number[] = [];

  /**
   * The format's two parts for the JSON text `bytes` (head: version and atom table; body:
   * the value), valid until the next call; undefined when the text is not transcoded. They
   * are separate so neither is copied to join them: the caller copies both into the
   * sandbox's memory.
   */
  transcode(
    bytes: Uint8Array,
  ): { readonly head: Uint8Array; readonly body: Uint8Array } | undefined {
    this.#src = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#pos = 0;
    this.#body.reset();
    this.#head.reset();
    if (this.#slots.length > KEEP_SLOTS) this.#slots = new Int32Array(256);
    else this.#slots.fill(0);
    this.#starts.length = 0;
    this.#lengths.length = 0;
    this.#hashes.length = 0;
    try {
      this.#value();
      this.#space();
      if (this.#pos !== this.#src.length) return undefined;
      this.#writeHead();
    } catch (error) {
      // Not JSON, or nested past this stack: the sandbox's own parse answers it.
      if (error instanceof NotTranscoded || error instanceof RangeError) return undefined;
      throw error;
    } finally {
      this.#src = Buffer.alloc(0);
    }
    return {
      head: this.#head.bytes.subarray(0, this.#head.at),
      body: this.#body.bytes.subarray(0, this.#body.at),
    };
  }

  #space(): void {
    const src = this.#src;
    let pos = this.#pos;
    for (;;) {
      const b = src[pos];
      if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) break;
      pos++;
    }
    this.#pos = pos;
  }

  /** The next byte after whitespace, not consumed (NaN at the end). */
  #peek(): number {
    const b = this.#src[this.#pos];
    if (b !== undefined && b > 0x20) return b;
    this.#space();
    return this.#src[this.#pos] ?? Number.NaN;
  }

  #value(): void {
    const b = this.#peek();
    const out = this.#body;
    if (b === QUOTE) {
      out.reserve(1);
      out.bytes[out.at++] = TAG_STRING;
      this.#string();
    } else if (b === 0x7b) this.#container(TAG_OBJECT, 0x7d);
    else if (b === 0x5b) this.#container(TAG_ARRAY, 0x5d);
    else if (b === MINUS || (b >= ZERO && b <= NINE)) this.#number();
    else if (b === 0x74) this.#literal("true", TAG_TRUE);
    else if (b === 0x66) this.#literal("false", TAG_FALSE);
    else if (b === 0x6e) this.#literal("null", TAG_NULL);
    else throw notTranscoded;
  }

  #literal(word: string, tag: number): void {
    const src = this.#src;
    for (let i = 0; i < word.length; i++) {
      if (src[this.#pos + i] !== word.charCodeAt(i)) throw notTranscoded;
    }
    this.#pos += word.length;
    const out = this.#body;
    out.reserve(1);
    out.bytes[out.at++] = tag;
  }

  /** Room for a count known only later; returns where to write it. */
  #countSlot(tag: number): number {
    const out = this.#body;
    out.reserve(1 + COUNT_BYTES);
    out.bytes[out.at++] = tag;
    const slot = out.at;
    out.at += COUNT_BYTES;
    return slot;
  }

  /** A count as a LEB128 padded to COUNT_BYTES (QuickJS reads at most five bytes). */
  #fillCount(slot: number, count: number): void {
    const bytes = this.#body.bytes;
    let v = count >>> 0;
    for (let i = 0; i < COUNT_BYTES - 1; i++) {
      bytes[slot + i] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    bytes[slot + COUNT_BYTES - 1] = v;
  }

  /** An array (`TAG_ARRAY`, up to `]`) or an object (`TAG_OBJECT`, up to `}`). */
  #container(tag: number, close: number): void {
    this.#pos++;
    const slot = this.#countSlot(tag);
    let count = 0;
    if (this.#peek() === close) {
      this.#pos++;
    } else {
      for (;;) {
        if (tag === TAG_OBJECT) this.#property();
        else this.#value();
        count++;
        const b = this.#peek();
        this.#pos++;
        if (b === close) break;
        if (b !== COMMA) throw notTranscoded;
      }
    }
    this.#fillCount(slot, count);
  }

  /** One `"key": value` of an object. */
  #property(): void {
    if (this.#peek() !== QUOTE) throw notTranscoded;
    const atom = this.#key();
    if (this.#peek() !== COLON) throw notTranscoded;
    this.#pos++;
    const out = this.#body;
    out.reserve(COUNT_BYTES);
    // An atom reference: its index shifted left, the low bit clear (not an integer).
    out.leb(atom << 1);
    this.#value();
  }

  /**
   * Reads past the string whose opening quote is at `#pos`: its text is from `#start` to
   * the returned end (its closing quote), and `#plain` says whether it holds neither an
   * escape nor a non-ASCII byte.
   */
  #stringEnd(): number {
    const src = this.#src;
    const length = src.length;
    let pos = this.#pos + 1;
    let plain = true;
    for (;;) {
      if (pos >= length) throw notTranscoded;
      const b = src[pos]!;
      if (b === QUOTE) break;
      // Most bytes are printable ASCII other than the backslash.
      if (b >= 0x20 && b < 0x80 && b !== BACKSLASH) {
        pos++;
        continue;
      }
      if (b < 0x20) throw notTranscoded;
      plain = false;
      // An escape's next byte is part of it (a quote there does not end the string).
      pos += b === BACKSLASH ? 2 : 1;
    }
    this.#plain = plain;
    this.#start = this.#pos + 1;
    this.#pos = pos + 1;
    return pos;
  }

  /** A string value: raw ASCII is copied; anything else is decoded by JSON.parse itself. */
  #string(): void {
    const end = this.#stringEnd();
    const start = this.#start;
    const out = this.#body;
    if (!this.#plain) {
      out.string(this.#decoded(start, end));
      return;
    }
    const length = end - start;
    out.reserve(COUNT_BYTES + length);
    out.leb(length << 1);
    if (length < SHORT_COPY) {
      const src = this.#src;
      const bytes = out.bytes;
      let at = out.at;
      for (let i = start; i < end; i++) bytes[at++] = src[i]!;
      out.at = at;
    } else {
      out.at += this.#src.copy(out.bytes, out.at, start, end);
    }
  }

  /** The string between the quotes at `start - 1` and `end`, as JSON.parse reads it. */
  #decoded(start: number, end: number): string {
    try {
      return JSON.parse(this.#src.toString("utf8", start - 1, end + 1)) as string;
    } catch {
      throw notTranscoded;
    }
  }

  /** A key: its atom's index, the key entered in the table at its first sight. */
  #key(): number {
    const end = this.#stringEnd();
    const start = this.#start;
    const src = this.#src;
    // FNV-1a over the raw bytes: a key is found by its spelling in the text. Two spellings
    // of one key ("a", "\u0061") are two entries naming the same atom, which QuickJS merges.
    let hash = 0x811c9dc5;
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ src[i]!, 0x01000193);
    const mask = this.#slots.length - 1;
    const length = end - start;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.#slots[slot]!;
      if (entry === 0) break;
      const e = entry - 1;
      if (this.#hashes[e] === hash && this.#lengths[e] === length) {
        const other = this.#starts[e]!;
        let same = true;
        for (let i = 0; i < length; i++) {
          if (src[start + i] !== src[other + i]) {
            same = false;
            break;
          }
        }
        if (same) return e + FIRST_ATOM;
      }
    }
    const e = this.#starts.length;
    this.#starts.push(start);
    this.#lengths.push(length);
    this.#hashes.push(hash);
    if (2 * (e + 1) > this.#slots.length) this.#rehash();
    else this.#place(e);
    return e + FIRST_ATOM;
  }

  #place(entry: number): void {
    const mask = this.#slots.length - 1;
    let slot = this.#hashes[entry]! & mask;
    while (this.#slots[slot] !== 0) slot = (slot + 1) & mask;
    this.#slots[slot] = entry + 1;
  }

  #rehash(): void {
    this.#slots = new Int32Array(this.#slots.length * 2);
    for (let e = 0; e < this.#starts.length; e++) this.#place(e);
  }

  #number(): void {
    const src = this.#src;
    const start = this.#pos;
    let pos = start;
    const negative = src[pos] === MINUS;
    if (negative) pos++;
    const first = pos;
    let value = 0;
    if (src[pos] === ZERO) pos++;
    else {
      for (let b = src[pos]!; b >= ZERO && b <= NINE; b = src[++pos]!)
        value = value * 10 + b - ZERO;
    }
    const digits = pos - first;
    if (digits === 0) throw notTranscoded;
    let integer = true;
    if (src[pos] === 0x2e) {
      integer = false;
      pos = this.#digits(pos + 1);
    }
    if (src[pos] === 0x65 || src[pos] === 0x45) {
      integer = false;
      pos++;
      if (src[pos] === 0x2b || src[pos] === MINUS) pos++;
      pos = this.#digits(pos);
    }
    this.#pos = pos;
    if (integer && digits <= INT_DIGITS) {
      this.#body.number(negative ? -value : value);
      return;
    }
    // The ECMAScript reading of a decimal, which JSON.parse uses in both engines.
    this.#body.number(Number(src.toString("latin1", start, pos)));
  }

  /** The end of one or more digits from `pos`. */
  #digits(pos: number): number {
    const src = this.#src;
    let at = pos;
    while (src[at]! >= ZERO && src[at]! <= NINE) at++;
    if (at === pos) throw notTranscoded;
    return at;
  }

  /** Version, then the atom table: each key's name, in the order of the entries. */
  #writeHead(): void {
    const head = this.#head;
    const src = this.#src;
    head.reserve(1 + COUNT_BYTES);
    head.bytes[head.at++] = BC_VERSION;
    head.leb(this.#starts.length);
    for (let e = 0; e < this.#starts.length; e++) {
      const start = this.#starts[e]!;
      const end = start + this.#lengths[e]!;
      let plain = true;
      for (let i = start; i < end; i++) {
        if (src[i] === BACKSLASH || src[i]! >= 0x80) {
          plain = false;
          break;
        }
      }
      if (!plain) {
        head.string(this.#decoded(start, end));
        continue;
      }
      head.reserve(COUNT_BYTES + end - start);
      head.leb((end - start) << 1);
      head.at += src.copy(head.bytes, head.at, start, end);
    }
  }
}
