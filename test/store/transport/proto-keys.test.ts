/**
 * Values with an own `__proto__` key cross the store socket unchanged, both ways: stored,
 * listed, diffed and run through query code over a real socket with the shipped query
 * worker, each comes back equal to JSON.parse of its text (compared as JSON.stringify
 * output: deepStrictEqual treats `__proto__` specially), and nothing reaches
 * Object.prototype. msgpackr alone renames the key to `__proto_`.
 */

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Packr } from "msgpackr";
import { decodePayload, encodeFrame } from "../../../src/store/transport/frames.ts";
import { servedQueries } from "../query/fixture.ts";

const TEXTS = [
  '{"__proto__": {"polluted": 1}, "a": [{"__proto__": null}]}',
  '{"__proto_": 1, "__proto__": 2, "x": {"y": [[{"__proto__": {"__proto__": {"polluted": 3}}}]]}}',
  '[{"__proto__": []}, "__proto__", {"k": "__proto__"}]',
  '{"constructor": {"prototype": {"polluted": 4}}, "__proto__": {"constructor": 5}}',
];

/** Same JSON text, same own keys in the same order, and the prototype JSON.parse gives. */
function assertSameAsParse(actual: unknown, text: string): void {
  const expected = JSON.parse(text);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected));
  assertPlain(actual);
}

function assertPlain(value: unknown): void {
  if (typeof value !== "object" || value === null) return;
  if (Array.isArray(value)) {
    for (const item of value) assertPlain(item);
    return;
  }
  assert.equal(Object.getPrototypeOf(value), Object.prototype);
  for (const key of Object.keys(value)) assertPlain((value as Record<string, unknown>)[key]);
}

function assertNoPollution(): void {
  const probe = {} as Record<string, unknown>;
  assert.equal(probe.polluted, undefined);
  assert.equal(Object.hasOwn(Object.prototype, "polluted"), false);
  assert.equal(typeof probe.constructor, "function");
}

describe("frames: __proto__ keys", () => {
  test("msgpackr alone renames the key (why frames.ts decodes such payloads itself)", () => {
    const packr = new Packr({ useRecords: false, mapsAsObjects: true });
    const back = packr.unpack(packr.pack(JSON.parse('{"__proto__": 1}')));
    assert.deepEqual(Object.keys(back), ["__proto_"]);
  });

  test("a frame round-trips every text exactly, without pollution", () => {
    for (const text of TEXTS) {
      assertSameAsParse(decodePayload(encodeFrame(JSON.parse(text)).subarray(4)), text);
    }
    assertNoPollution();
  });

  test("a literal __proto_ key stays itself, beside a __proto__ key or alone", () => {
    const alone = decodePayload(encodeFrame({ __proto_: 1 }).subarray(4));
    assert.deepEqual(Object.keys(alone as object), ["__proto_"]);
    const both = decodePayload(encodeFrame(JSON.parse('{"__proto_":1,"__proto__":2}')).subarray(4));
    assert.deepEqual(Object.keys(both as object), ["__proto_", "__proto__"]);
  });

  test("the text __proto__ in a string value only is decoded as usual", () => {
    const value = { s: "__proto__", n: 2n ** 60n, m: [1, { k: "v" }] };
    assert.deepEqual(decodePayload(encodeFrame(value).subarray(4)), value);
  });

  test("non-string map keys name properties as msgpackr names them", () => {
    // fixmap of 2: 1 → "a", true → {"__proto__": 0}
    const payload = Buffer.from([
      0x82,
      0x01,
      0xa1,
      0x61,
      0xc3,
      0x81,
      0xa9,
      ...Buffer.from("__proto__"),
      0x00,
    ]);
    assert.equal(JSON.stringify(decodePayload(payload)), '{"1":"a","true":{"__proto__":0}}');
  });
});

describe("__proto__ keys over a real socket", async () => {
  const { client } = await servedQueries();
  await client.call("collections.create", { collection: "p" });
  const docs = TEXTS.map((text, i) => ({ key: `k${i}`, text }));
  const first = (await client.put(
    "p",
    docs.map((d) => ({ key: d.key, value: JSON.parse(d.text) })),
  )) as { version: number };

  test("document.get answers each value as stored", async () => {
    for (const { key, text } of docs) {
      const got = (await client.call("document.get", { collection: "p", key })) as {
        value: unknown;
      };
      assertSameAsParse(got.value, text);
    }
    assertNoPollution();
  });

  test("document.list answers each value as stored", async () => {
    const page = (await client.call("document.list", { collection: "p" })) as {
      rows: { key: string; value: unknown }[];
    };
    assert.deepEqual(
      page.rows.map((r) => r.key),
      docs.map((d) => d.key),
    );
    for (const [i, row] of page.rows.entries()) assertSameAsParse(row.value, docs[i]!.text);
    assertNoPollution();
  });

  test("changes.list answers old and new values as stored", async () => {
    const next = '{"__proto__": {"polluted": 9}, "v": 2}';
    await client.put("p", [{ key: "k0", value: JSON.parse(next) }]);
    const page = (await client.call("changes.list", {
      collection: "p",
      from: first.version,
    })) as { changes: { key: string; type: string; from?: unknown; to?: unknown }[] };
    assert.equal(page.changes.length, 1);
    const change = page.changes[0]!;
    assert.equal(change.type, "modified");
    assertSameAsParse(change.from, docs[0]!.text);
    assertSameAsParse(change.to, next);
    await client.put("p", [{ key: "k0", value: JSON.parse(docs[0]!.text) }]);
    assertNoPollution();
  });

  test("query.run gives the code its args and values, and answers its outputs, as sent", async () => {
    const args = '{"__proto__": {"polluted": 7}, "list": [{"__proto__": null}]}';
    const page = (await client.call("query.run", {
      collection: "p",
      code: `(r, a) => ({ value: r.value, args: a, own: Object.hasOwn(a, "__proto__"), made: JSON.parse('{"__proto__": {"polluted": 8}}') })`,
      args: JSON.parse(args),
    })) as { rows: { key: string; output: unknown }[] };
    assert.equal(page.rows.length, docs.length);
    page.rows.forEach((row, i) => {
      const text = `{"value": ${docs[i]!.text}, "args": ${args}, "own": true, "made": {"__proto__": {"polluted": 8}}}`;
      assertSameAsParse(row.output, text);
    });
    assertNoPollution();
  });
});
