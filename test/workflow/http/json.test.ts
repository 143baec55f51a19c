import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { LosslessNumber, parseJson } from "../../../src/common/decode/index.ts";
import { exactNumbers } from "../../../src/workflow/http/json.ts";

describe("reply serializer", () => {
  const rows: [label: string, value: unknown, json: string][] = [
    ["u64 max as bigint", { n: 18446744073709551615n }, '{"n":18446744073709551615}'],
    ["lossless number kept as written", { n: new LosslessNumber("1.50") }, '{"n":1.50}'],
    ["plain values", { a: 1, b: "x", c: [true, null] }, '{"a":1,"b":"x","c":[true,null]}'],
    ["a parsed body echoed", parseJson('{"id":9007199254740993}'), '{"id":9007199254740993}'],
  ];
  for (const [label, value, json] of rows) {
    test(label, () => assert.equal(JSON.stringify(value, exactNumbers), json));
  }
});
