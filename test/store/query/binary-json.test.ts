/**
 * The sandbox's records in QuickJS's binary format (src/store/query/binary-json.ts) against
 * QuickJS's own JSON.parse of the same text: inside the real sandbox, every record the query
 * sees is compared, deeply, with `JSON.parse` of that record's text (made inside the same
 * runtime): the same types, the same numbers (-0 apart from 0), the same strings, the same
 * own keys in the same order with the same attributes, the same prototypes. The values are
 * chosen at the format's edges: int32 bounds and the zigzag LEB128 steps, doubles,
 * Latin-1, UTF-16 and lone surrogates, short and long strings, integer-like keys, an own
 * `__proto__`, duplicate keys, deep nesting, large arrays and many distinct keys.
 */

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { BinaryJsonWriter } from "../../../src/store/query/binary-json.ts";
import { Sandbox } from "../../../src/store/query/sandbox.ts";

const LIMITS = { timeMs: 10_000, memoryBytes: 32 << 20, outputsPerRecord: 1 };

/**
 * Compares the record (built from the binary form) with JSON.parse of its text (`args`
 * maps each key to the record's text in the batch) and returns "same" or the path of the
 * first difference. A block body: the fast path never takes it, QuickJS runs it.
 */
const COMPARE = `(r, texts) => {
  const differ = (a, b, path) => {
    if (typeof a !== typeof b) return path + ": typeof " + typeof a + " vs " + typeof b;
    if (typeof a !== "object" || a === null || b === null) {
      return Object.is(a, b) ? undefined : path + ": " + String(a) + " vs " + String(b);
    }
    if (Array.isArray(a) !== Array.isArray(b)) return path + ": array vs not";
    if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return path + ": prototype";
    if (Object.isExtensible(a) !== Object.isExtensible(b)) return path + ": extensible";
    const ka = Reflect.ownKeys(a), kb = Reflect.ownKeys(b);
    if (ka.length !== kb.length) return path + ": " + ka.length + " keys vs " + kb.length;
    for (let i = 0; i < ka.length; i++) {
      if (ka[i] !== kb[i]) return path + ": key " + String(ka[i]) + " vs " + String(kb[i]);
      const da = Object.getOwnPropertyDescriptor(a, ka[i]);
      const db = Object.getOwnPropertyDescriptor(b, kb[i]);
      for (const f of ["writable", "enumerable", "configurable"]) {
        if (da[f] !== db[f]) return path + "." + String(ka[i]) + ": " + f;
      }
      const inner = differ(da.value, db.value, path + "." + String(ka[i]));
      if (inner !== undefined) return inner;
    }
    return undefined;
  };
  return differ(r, JSON.parse(texts[r.key]), "record") ?? "same";
}`;

const deep = (levels: number): unknown => {
  let value: unknown = "bottom";
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { level: i, inner: value };
  return value;
};

/** Values as the store holds them: JSON texts, some of which JSON.stringify cannot make. */
const TEXTS: Record<string, string> = {
  ints: JSON.stringify([0, 1, -1, 63, 64, -64, -65, 127, 128, 8191, 8192, -8193]),
  int32: JSON.stringify([2147483647, -2147483648, 2147483648, -2147483649, 4294967296]),
  doubles: JSON.stringify([0.1, -2.5, 1e21, 1.7976931348623157e308, 5e-324, 2 ** 53 + 2]),
  zeros: "[0, -0, 0.0, -0.0, 0e5, -0E-3]",
  exact:
    "[12345678901234567890, 1.00000000000000011102230246251565404236316680908203125, 1e400, -1e400]",
  strings: JSON.stringify(["", "a", "héllo", "ÿ", "Ā", "日本語", "😀", "tab\there", "\u0000nul"]),
  long: JSON.stringify(["x".repeat(200), `${"x".repeat(100)}é`, `${"é".repeat(100)}€`]),
  lone: '["\\ud800", "a\\udfffb", "\\ud83d\\ude00", "\\u00e9\\u0101"]',
  keys: '{"b":1,"a":2,"10":3,"2":4,"-1":5,"01":6,"4294967294":7,"4294967295":8,"":9,"é":10,"日":11}',
  proto: '{"__proto__":{"polluted":1},"constructor":2,"toString":3}',
  duplicate: '{"a":1,"b":2,"a":3}',
  spellings: '{"a":1,"\\u0061":2,"b\\n":3,"\\"q\\"":4,"\\ud800":5,"\\u00e9":6,"é":7}',
  nested: JSON.stringify(deep(127)),
  empty: '[{}, [], [[]], {"": {}}]',
  literals: "[true, false, null]",
  wide: JSON.stringify(Array.from({ length: 300 }, (_, i) => i * 1000)),
  many: JSON.stringify(Object.fromEntries(Array.from({ length: 9000 }, (_, i) => [`k${i}`, i]))),
  scalar: '"just a string"',
  number: "-0",
};

describe("records in QuickJS's binary format", () => {
  test("the sandbox builds exactly what its JSON.parse builds from the same text", async () => {
    const keys = Object.keys(TEXTS);
    // Whitespace as a writer other than the store might lay a record out.
    const records = Object.fromEntries(
      keys.map((k) => [k, `{ "key" : ${JSON.stringify(k)} , "value" : ${TEXTS[k]} }`]),
    );
    const sandbox = await Sandbox.create(COMPARE, JSON.stringify(records), LIMITS);
    try {
      const batch = `[ ${keys.map((k) => records[k]).join(" ,\n")} ]`;
      // Transcoded whole, not handed to the sandbox's own parse.
      assert.ok(new BinaryJsonWriter().transcode(Buffer.from(batch)));
      const rows = JSON.parse(Buffer.from(sandbox.runBatch(Buffer.from(batch))).toString());
      assert.deepEqual(
        rows,
        keys.map((_, i) => [i, "same"]),
      );
    } finally {
      sandbox.dispose();
    }
  });

  test("a batch with many distinct keys and long strings round-trips through one writer", async () => {
    // One writer is reused between batches: a small batch after a large one starts clean.
    const sandbox = await Sandbox.create(
      "(r) => { return [r.key, JSON.stringify(r.value)] }",
      "null",
      { ...LIMITS, outputsPerRecord: 2 },
    );
    try {
      // Many keys grow the key table, a 5 MiB string the buffers: neither is kept after.
      const large = [
        { key: "big", value: { ...JSON.parse(TEXTS.many!), long: "é".repeat(5 << 20) } },
      ];
      const small = [{ key: "small", value: { k1: "é", z: [1.5] } }];
      for (const batch of [large, small, large]) {
        const rows = JSON.parse(
          Buffer.from(sandbox.runBatch(Buffer.from(JSON.stringify(batch)))).toString(),
        );
        assert.deepEqual(rows, [
          [0, batch[0]!.key],
          [0, JSON.stringify(batch[0]!.value)],
        ]);
      }
    } finally {
      sandbox.dispose();
    }
  });

  test("the transcoder names each distinct key once, in the head", () => {
    const writer = new BinaryJsonWriter();
    const { head, body } = writer.transcode(Buffer.from('[{"a":1,"b":2},{"b":3,"a":4}]'))!;
    // Version 5, two atoms ("a", "b": length 1, Latin-1), then the array of two objects,
    // each count padded to five bytes.
    assert.deepEqual([...head], [5, 2, 2, 0x61, 2, 0x62]);
    const two = [0x82, 0x80, 0x80, 0x80, 0];
    assert.deepEqual(
      [...body],
      [9, ...two, 8, ...two, 2, 5, 2, 4, 5, 4, 8, ...two, 4, 5, 6, 2, 5, 8],
    );
  });

  test("text that is not JSON is not transcoded, and the sandbox refuses it as before", async () => {
    const writer = new BinaryJsonWriter();
    const bad = [
      "[1,]",
      "[01]",
      '{"a"}',
      '{"a":1,}',
      '"\u0001"',
      '"tab\there"',
      "tru",
      "[1] x",
      '"abc',
      "[1.]",
      "[-]",
      "[1e]",
      '"\\q"',
      "[+1]",
      "[.5]",
      "",
      " ",
    ];
    for (const text of bad) {
      assert.equal(writer.transcode(Buffer.from(text)), undefined, JSON.stringify(text));
      assert.throws(() => JSON.parse(text), SyntaxError, JSON.stringify(text));
    }
    // Nested past the transcoder's stack: left to the sandbox, whose parse meets its own limit.
    const deepText = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    assert.equal(writer.transcode(Buffer.from(deepText)), undefined);
    // And the writer is whole afterwards.
    assert.ok(writer.transcode(Buffer.from('[{"k":"v"}]')));
    const sandbox = await Sandbox.create("(r) => { return r }", "null", LIMITS);
    try {
      assert.throws(
        () => sandbox.runBatch(Buffer.from('[{"key":"a","value":1},]')),
        (error: { code?: string; message?: string }) =>
          error.code === "query_code_error" && /SyntaxError/.test(error.message ?? ""),
      );
    } finally {
      sandbox.dispose();
    }
  });
  test("records that do not fit in query_memory_bytes are query_memory_limit", async () => {
    const limits = { ...LIMITS, memoryBytes: 4 << 20 };
    const value = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, [i, `v${i}`]]));
    // Just past the limit (QuickJS then cannot even make its error and throws null, which
    // QuickJS's own parse of the text gave as query_code_error "null") and far past it.
    for (const count of [2000, 8000]) {
      const batch = JSON.stringify(
        Array.from({ length: count }, (_, i) => ({ key: `r${i}`, value })),
      );
      assert.ok(new BinaryJsonWriter().transcode(Buffer.from(batch)));
      const sandbox = await Sandbox.create("(r) => { return r.key }", "null", limits);
      try {
        assert.throws(
          () => sandbox.runBatch(Buffer.from(batch)),
          (error: { code?: string }) => error.code === "query_memory_limit",
        );
      } finally {
        sandbox.dispose();
      }
    }
    // The next query's sandbox is whole.
    const next = await Sandbox.create("(r) => { return r.key }", "null", limits);
    try {
      const rows = JSON.parse(
        Buffer.from(next.runBatch(Buffer.from('[{"key":"a","value":1}]'))).toString(),
      );
      assert.deepEqual(rows, [[0, "a"]]);
    } finally {
      next.dispose();
    }
  });
});
