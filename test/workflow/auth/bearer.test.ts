import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bearerToken } from "../../../src/workflow/auth/bearer.ts";

describe("bearerToken (RFC 7235 scheme, RFC 6750 token68)", () => {
  const rows: [string | undefined, string | undefined][] = [
    ["Bearer abc.def-ghi_jkl", "abc.def-ghi_jkl"],
    ["bearer abc", "abc"],
    ["BEARER abc", "abc"],
    ["BeArEr   abc  ", "abc"],
    ["  Bearer abc==", "abc=="],
    ["Bearer a/b+c~d", "a/b+c~d"],
    [undefined, undefined],
    ["", undefined],
    ["Bearer", undefined],
    ["Bearer ", undefined],
    ["Basic abc", undefined],
    ["Bearer a b", undefined],
    ["Bearer a=b", undefined],
    ["Bearerabc", undefined],
    ["Bearer\tabc", undefined],
    ["Bearer abc\u0000", undefined],
  ];
  for (const [header, token] of rows) {
    it(`${JSON.stringify(header)} → ${JSON.stringify(token)}`, () => {
      assert.equal(bearerToken(header), token);
    });
  }
});
