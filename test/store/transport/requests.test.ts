import assert from "node:assert/strict";
import { test } from "node:test";
import { array, child, DecodeError, decode, object } from "../../../src/common/decode/index.ts";
import { jsonValue, key, records } from "../../../src/store/transport/requests.ts";

// A put's records are read in one pass when every record is well formed; any other list
// goes through the general decoder. Both must answer as the general decoder alone: the
// same records, or the same refusal (kind, field, words, code) for the same record.
const general = array(object({ key, value: jsonValue }), { min: 1 });
const at = child(child(undefined, "args"), "records");

function outcome(decoder: typeof general, value: unknown) {
  const result = decode(decoder, value, at);
  if (result.ok) return { ok: true, value: result.value };
  const { kind, field, reason, code, message } = result.error;
  return { ok: false, kind, field, reason, code, message };
}

const proto = JSON.parse('{"key":"p","value":{"__proto__":{"x":1}}}') as unknown;

const lists: unknown[] = [
  [{ key: "a", value: 1 }],
  [
    { value: { n: 2n ** 60n, s: "x" }, key: "b" },
    { key: "c", value: [null, true, 1.5, "é"] },
  ],
  [proto],
  [{ key: "k".repeat(1024), value: 1 }],
  [{ key: "é".repeat(512), value: 1 }],
  [{ key: "€".repeat(341), value: 1 }],
  [{ key: "€".repeat(342), value: 1 }],
  [{ key: "k".repeat(1025), value: 1 }],
  [],
  {},
  null,
  "records",
  [{ key: "a", value: 1 }, null],
  [{ key: "a", value: 1 }, 5],
  [{ key: "a", value: 1 }, [1]],
  [{ key: "a" }],
  [{ value: 1 }],
  [{ key: "a", value: 1, extra: 2 }],
  [{ key: "a", value: undefined }],
  [{ key: "", value: 1 }],
  [{ key: 7, value: 1 }],
  [{ key: "a\u0000b", value: 1 }],
  [
    { key: "a", value: 1 },
    { key: "b", value: Number.NaN },
  ],
  [{ key: "a", value: { deep: [Number.POSITIVE_INFINITY] } }],
  [{ key: "a", value: 2n ** 64n }],
  [{ key: "a", value: new Date(0) }],
  [{ key: "a", value: () => 1 }],
  [{ key: "a\u0000", value: Number.NaN, extra: 1 }],
  [{ key: "a", value: JSON.parse(`${"[".repeat(140)}${"]".repeat(140)}`) }],
  [Object.assign(Object.create(null), { key: "a", value: 1 })],
];

test("a put's records decode, or are refused, exactly as the general decoder does", () => {
  for (const [i, list] of lists.entries()) {
    assert.deepEqual(outcome(records as typeof general, list), outcome(general, list), `list ${i}`);
  }
  const refused = decode(
    records,
    [
      { key: "a", value: 1 },
      { key: "b", value: Number.NaN },
    ],
    at,
  );
  assert.ok(!refused.ok && refused.error instanceof DecodeError);
  assert.equal(refused.error.field, "args.records[1].value");
});

test("records of a well-formed list come back as {key, value} objects", () => {
  const result = decode(records, [{ value: 2, key: "z" }], at);
  assert.ok(result.ok);
  assert.deepEqual(Object.keys(result.value[0]!), ["key", "value"]);
  assert.deepEqual(key.run("z", undefined), "z");
});
