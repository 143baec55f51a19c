import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  bigInteger,
  type Decoder,
  decode,
  finiteNumber,
  integer,
  parseJson,
  type RefusalKind,
  U32_MAX,
  U64_MAX,
  u32,
  u64,
  usize,
} from "../../../src/common/decode/index.ts";

type Row = readonly [json: string, outcome: bigint | RefusalKind];

/** The edges every integer kind is tested at, as JSON text. */
function edges(min: bigint, max: bigint, typeMax: bigint): Row[] {
  const rows: Row[] = [
    [`${max}`, max],
    [`${min}`, min],
    ["-1", "negative"],
    ["1.0", "whole"],
    ["1e3", "whole"],
    ["-0", "whole"],
    ["0.5", "whole"],
    ['"1"', "type"],
    ["true", "type"],
    ["[1]", "type"],
    ["{}", "type"],
    ["null", "null"],
    [`${typeMax + 1n}`, "overflow"],
  ];
  if (min > 0n) rows.push([`${min - 1n}`, "range"]);
  else rows.push(["0", 0n]);
  if (max < typeMax) rows.push([`${max + 1n}`, "range"]);
  if (min <= 1n && max >= 1n) rows.push(["1", 1n]);
  return rows;
}

const kinds: {
  name: string;
  decoder: Decoder<bigint | number>;
  min: bigint;
  max: bigint;
  typeMax: bigint;
}[] = [
  { name: "u32", decoder: u32(), min: 0n, max: U32_MAX, typeMax: U32_MAX },
  { name: "u32 1..4294967295", decoder: u32({ min: 1 }), min: 1n, max: U32_MAX, typeMax: U32_MAX },
  {
    name: "u32 2..1024",
    decoder: u32({ min: 2, max: 1024 }),
    min: 2n,
    max: 1024n,
    typeMax: U32_MAX,
  },
  {
    name: "u32 1..4096",
    decoder: integer("u32", { min: 1, max: 4096 }),
    min: 1n,
    max: 4096n,
    typeMax: U32_MAX,
  },
  { name: "u64", decoder: u64(), min: 0n, max: U64_MAX, typeMax: U64_MAX },
  { name: "positive u64", decoder: u64({ min: 1 }), min: 1n, max: U64_MAX, typeMax: U64_MAX },
  { name: "u64 >= 2", decoder: u64({ min: 2 }), min: 2n, max: U64_MAX, typeMax: U64_MAX },
  { name: "u64 0..36500", decoder: u64({ max: 36500 }), min: 0n, max: 36500n, typeMax: U64_MAX },
  {
    name: "u64 1..65536",
    decoder: u64({ min: 1, max: 65536 }),
    min: 1n,
    max: 65536n,
    typeMax: U64_MAX,
  },
  { name: "usize", decoder: usize(), min: 0n, max: U64_MAX, typeMax: U64_MAX },
  {
    name: "positive usize",
    decoder: bigInteger("usize", { min: 1 }),
    min: 1n,
    max: U64_MAX,
    typeMax: U64_MAX,
  },
];

for (const kind of kinds) {
  describe(`integer kind ${kind.name}`, () => {
    for (const [json, outcome] of edges(kind.min, kind.max, kind.typeMax)) {
      test(`${json} → ${typeof outcome === "bigint" ? `accepted as ${outcome}` : `refused (${outcome})`}`, () => {
        const result = decode(kind.decoder, parseJson(json));
        if (typeof outcome === "bigint") {
          assert.ok(result.ok, result.ok ? "" : result.error.message);
          assert.equal(BigInt(result.value), outcome);
        } else {
          assert.equal(result.ok, false);
          if (!result.ok) assert.equal(result.error.kind, outcome, result.error.message);
        }
      });
    }
  });
}

test("u64 keeps its maximum exactly and refuses one more", () => {
  const ok = decode(u64(), parseJson("18446744073709551615"));
  assert.deepEqual(ok, { ok: true, value: 18446744073709551615n });
  const over = decode(u64(), parseJson("18446744073709551616"));
  assert.equal(over.ok, false);
  if (!over.ok) assert.match(over.error.message, /overflows u64/);
});

test("u32 fields decode to JS numbers, u64 fields to bigints", () => {
  assert.deepEqual(decode(u32(), parseJson("7")), { ok: true, value: 7 });
  assert.deepEqual(decode(u64(), parseJson("7")), { ok: true, value: 7n });
});

test("each refusal kind reads differently", () => {
  const reasons = ["-1", "1.5", "18446744073709551616", '"x"', "null"].map((json) => {
    const r = decode(u64({ max: 10 }), parseJson(json));
    assert.equal(r.ok, false);
    return r.ok ? "" : r.error.reason.split(" ").slice(0, 2).join(" ");
  });
  assert.equal(new Set(reasons).size, reasons.length, reasons.join(" | "));
});

test("a JS number from code is accepted when it is a safe integer, refused as not whole otherwise", () => {
  assert.deepEqual(decode(u32(), 5), { ok: true, value: 5 });
  const float = decode(u32(), 5.5);
  assert.equal(float.ok ? "" : float.error.kind, "whole");
  const minusZero = decode(u32(), -0);
  assert.equal(minusZero.ok ? "" : minusZero.error.kind, "whole");
});

test("bigint input (TOML integers) is decoded like JSON text", () => {
  assert.deepEqual(decode(u64(), 42n), { ok: true, value: 42n });
  const neg = decode(u64(), -42n);
  assert.equal(neg.ok ? "" : neg.error.kind, "negative");
});

test("integer() refuses bounds that a JS number cannot hold exactly", () => {
  assert.throws(() => integer("u64"), RangeError);
  assert.throws(() => u32({ min: 5, max: 4 }), RangeError);
});

describe("finite numbers", () => {
  const rows: [string, number | RefusalKind][] = [
    ["0.5", 0.5],
    ["1e3", 1000],
    ["-2", "range"],
    ["1e400", "overflow"],
    ['"1"', "type"],
    ["null", "null"],
  ];
  for (const [json, outcome] of rows) {
    test(`${json}`, () => {
      const r = decode(finiteNumber({ min: 0 }), parseJson(json));
      if (typeof outcome === "number") assert.deepEqual(r, { ok: true, value: outcome });
      else assert.equal(r.ok ? "" : r.error.kind, outcome);
    });
  }
});
