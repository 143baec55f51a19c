import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  absolutePath,
  decode,
  envValue,
  nullable,
  oneOf,
  parseJson,
  type RefusalKind,
  string,
  u64,
} from "../../../src/common/decode/index.ts";

type Row = [json: string, outcome: string | { kind: RefusalKind; reason?: string }];

const tables: { name: string; decoder: Parameters<typeof decode>[0]; rows: Row[] }[] = [
  {
    name: "string 1..4 bytes, trimmed",
    decoder: string({ minBytes: 1, maxBytes: 4, trim: true }),
    rows: [
      ['"abcd"', "abcd"],
      ['"  ab  "', "ab"],
      ['"a"', "a"],
      ['"   "', { kind: "shape", reason: "must not be empty" }],
      ['"abcde"', { kind: "shape", reason: "must be at most 4 bytes, found 5" }],
      ['"éé€"', { kind: "shape", reason: "must be at most 4 bytes, found 7" }],
      ["1", { kind: "type", reason: "expected string, found number" }],
      ["null", { kind: "null" }],
    ],
  },
  {
    name: "string with a pattern",
    decoder: string({ pattern: /^[A-Za-z0-9_-]+$/, patternReason: "letters, digits, _ or - only" }),
    rows: [
      ['"db_1-x"', "db_1-x"],
      ['"db 1"', { kind: "shape", reason: "letters, digits, _ or - only" }],
      ['""', { kind: "shape", reason: "letters, digits, _ or - only" }],
    ],
  },
  {
    name: "absolute path",
    decoder: absolutePath({ reason: "query_worker must be an absolute path" }),
    rows: [
      ['"/usr/bin/qw"', "/usr/bin/qw"],
      ['"bin/qw"', { kind: "shape", reason: "query_worker must be an absolute path" }],
      ['""', { kind: "shape" }],
      ['"/a\\u0000b"', { kind: "shape" }],
      ["[]", { kind: "type", reason: "expected absolute path string, found array" }],
    ],
  },
  {
    name: "nullable absolute path",
    decoder: nullable(absolutePath()),
    rows: [
      ["null", "null"],
      ['"/run/x.sock"', "/run/x.sock"],
      ["false", { kind: "type" }],
    ],
  },
  {
    name: "enum",
    decoder: oneOf(["open", "closed"]),
    rows: [
      ['"closed"', "closed"],
      ['"Closed"', { kind: "range", reason: 'must be one of "open", "closed", found "Closed"' }],
      ["true", { kind: "type" }],
    ],
  },
];

for (const table of tables) {
  describe(table.name, () => {
    for (const [json, outcome] of table.rows) {
      test(json, () => {
        const r = decode(table.decoder, parseJson(json));
        if (typeof outcome === "string") {
          assert.ok(r.ok, r.ok ? "" : r.error.message);
          assert.equal(String(r.value), outcome);
        } else {
          assert.equal(r.ok, false);
          if (r.ok) return;
          assert.equal(r.error.kind, outcome.kind, r.error.message);
          if (outcome.reason !== undefined) assert.equal(r.error.reason, outcome.reason);
        }
      });
    }
  });
}

describe("environment values", () => {
  const rows: [string, bigint | RefusalKind][] = [
    ["43200", 43200n],
    [" 5000 ", 5000n],
    ["0", "range"],
    ["1.5", "whole"],
    ["1e3", "whole"],
    ["-1", "negative"],
    ["abc", "type"],
    ["", "type"],
    ["18446744073709551616", "overflow"],
  ];
  for (const [text, outcome] of rows) {
    test(JSON.stringify(text), () => {
      const r = decode(u64({ min: 1 }), envValue(text));
      if (typeof outcome === "bigint") assert.deepEqual(r, { ok: true, value: outcome });
      else assert.equal(r.ok ? "" : r.error.kind, outcome);
    });
  }
});
