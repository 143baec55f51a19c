import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  encodeBatchFrame,
  encodeJsonFrame,
  JsonFrameReader,
  sliceBatch,
} from "../../../src/store/query/frames.ts";

const awkward: [string, string][] = [
  ["plain", '{"n":1}'],
  ["", "null"],
  ["~!#$%&'()*+,-./:;<=>?@[]^_`{|}", "0"],
  ["del\u007f", "1"],
  ["back\\slash", "2"],
  ["unit\u001fsep", "3"],
  ['quote"back\\slash', '"text"'],
  ["clé-日本-😀", '{"s":"ünï 😀 ☃"}'],
  ["\u2028line", "[1,2,3]"],
];

describe("worker frames", () => {
  test("a batch frame is the documented layout and slices back to its records", () => {
    const frame = encodeBatchFrame(4_000_000_000, awkward);
    const payload = frame.subarray(4);
    assert.equal(frame.readUInt32BE(0), payload.length);
    const message = JSON.parse(payload.toString("utf8"));
    assert.deepEqual(message, {
      type: "batch",
      id: 4_000_000_000,
      records: awkward.map(([key, json]) => ({ key, value: JSON.parse(json) })),
    });
    // Byte for byte the layout, whether a key is copied as it is or escaped.
    assert.equal(
      payload.toString("utf8"),
      `{"type":"batch","id":4000000000,"records":[${awkward
        .map(([key, json]) => `{"key":${JSON.stringify(key)},"value":${json}}`)
        .join(",")}]}`,
    );
    const sliced = sliceBatch(payload)!;
    assert.equal(sliced.id, 4_000_000_000);
    assert.deepEqual(JSON.parse(sliced.records.toString("utf8")), message.records);
  });

  test("a batch frame grows past its estimate for multi-byte text", () => {
    const wide: [string, string][] = [["k", JSON.stringify("日本語".repeat(5000))]];
    const payload = encodeBatchFrame(1, wide).subarray(4);
    assert.equal(JSON.parse(payload.toString("utf8")).records[0].value, "日本語".repeat(5000));
  });

  test("an empty batch is an empty array", () => {
    const payload = encodeBatchFrame(7, []).subarray(4);
    assert.equal(payload.toString("utf8"), '{"type":"batch","id":7,"records":[]}');
    assert.equal(sliceBatch(payload)!.records.toString("utf8"), "[]");
  });

  test("any other layout is left to the parser", () => {
    for (const text of [
      '{"type":"batch", "id":1,"records":[]}',
      '{"id":1,"type":"batch","records":[]}',
      '{"type":"batch","id":99999999999,"records":[]}',
      '{"type":"batch","id":1,"records":[]',
      '{"type":"end","id":1}',
    ]) {
      assert.equal(sliceBatch(Buffer.from(text)), undefined, text);
    }
  });

  test("the reader reassembles frames split anywhere and refuses an oversized one", () => {
    const frames = Buffer.concat([
      encodeJsonFrame('{"type":"end","id":1}'),
      encodeBatchFrame(2, awkward),
      encodeJsonFrame('{"type":"end","id":3}'),
    ]);
    for (const size of [1, 3, 7, 64, frames.length]) {
      const reader = new JsonFrameReader(1 << 20);
      const texts: string[] = [];
      for (let at = 0; at < frames.length; at += size) {
        for (const event of reader.push(frames.subarray(at, at + size))) {
          assert.equal(event.kind, "frame");
          if (event.kind === "frame") texts.push(event.payload.toString("utf8"));
        }
      }
      assert.deepEqual(
        texts.map((t) => JSON.parse(t).id),
        [1, 2, 3],
        `chunks of ${size}`,
      );
    }
    const small = new JsonFrameReader(10);
    assert.deepEqual(
      [...small.push(encodeJsonFrame('{"type":"end","id":1}'))],
      [{ kind: "too_large", length: 21 }],
    );
  });
});
