/**
 * The argument check of record values (`jsonValue`, requests.ts) reaches every member of
 * every object, an own `__proto__` key (from a decoded map) included: a value it must
 * refuse is refused wherever it sits, and everything JSON can hold is accepted.
 */

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decodeArgs } from "../../../src/store/transport/verbs.ts";

/** An object with an own enumerable `__proto__` key, as the socket decodes one. */
function withProtoKey(inner: unknown, rest: Record<string, unknown> = {}): object {
  const object: Record<string, unknown> = { ...rest };
  Object.defineProperty(object, "__proto__", {
    value: inner,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return object;
}

function put(value: unknown) {
  return () => decodeArgs("document.put", { collection: "c", key: "k", value });
}

function nested(depth: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { v: value } : [value];
  return value;
}

const refused: [string, unknown][] = [
  ["NaN", Number.NaN],
  ["Infinity", Number.POSITIVE_INFINITY],
  ["2^64", 2n ** 64n],
  ["-2^63 - 1", -(2n ** 63n) - 1n],
  ["a Date", new Date(0)],
  ["a Map", new Map()],
  ["undefined", undefined],
  ["a function", () => 1],
];

describe("jsonValue: the check of record values", () => {
  for (const [name, bad] of refused) {
    test(`${name} is refused at the top, in objects, arrays and under an own __proto__ key`, () => {
      const places: unknown[] = [
        { a: 1, b: bad },
        [1, [2, { c: bad }]],
        withProtoKey(bad),
        withProtoKey({ deeper: [bad] }, { before: 1 }),
        { x: withProtoKey([1, bad]) },
      ];
      // undefined alone is an absent value (key without value), refused by another rule.
      if (bad !== undefined) places.push(bad);
      for (const value of places) {
        assert.throws(put(value), { code: "invalid_request" }, `accepted ${name} in a value`);
      }
    });
  }

  test("nesting deeper than 128 levels is refused, also under an own __proto__ key", () => {
    assert.doesNotThrow(put(nested(128, 1)));
    assert.throws(put(nested(130, 1)), { code: "invalid_request" });
    assert.throws(put(withProtoKey(nested(130, 1))), { code: "invalid_request" });
  });

  test("every JSON shape, 64-bit integers and own __proto__ keys are accepted", () => {
    const accepted: unknown[] = [
      null,
      true,
      0,
      -1.5,
      "text",
      [],
      {},
      { a: [1, "two", null, { b: false }], c: { d: {} } },
      2n ** 64n - 1n,
      -(2n ** 63n),
      { big: 2n ** 63n, list: [2n ** 60n] },
      withProtoKey({ polluted: 1 }, { a: 1 }),
      withProtoKey(withProtoKey([withProtoKey(null)])),
    ];
    for (const value of accepted) assert.doesNotThrow(put(value));
  });
});
