import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DecodeError, MAX_JSON_DEPTH, parseJson } from "../../../src/common/decode/index.ts";

const nested = (open: string, close: string, depth: number) =>
  `${open.repeat(depth)}${close.repeat(depth)}`;

describe("parseJson refuses nesting beyond MAX_JSON_DEPTH", () => {
  const accepted: [label: string, text: string][] = [
    ["arrays at the limit", nested("[", "]", MAX_JSON_DEPTH)],
    [
      "objects at the limit",
      `${'{"a":'.repeat(MAX_JSON_DEPTH - 1)}{}${"}".repeat(MAX_JSON_DEPTH - 1)}`,
    ],
    ["brackets inside a string", JSON.stringify(nested("[", "]", 10_000))],
    ["escaped quotes inside a string", JSON.stringify(`\\"${nested("{", "}", 10_000)}`)],
    ["siblings do not add up", `[${Array(10_000).fill("[[]]").join(",")}]`],
  ];
  for (const [label, text] of accepted) {
    test(`accepts ${label}`, () => assert.doesNotThrow(() => parseJson(text)));
  }

  const refused: [label: string, text: string][] = [
    ["arrays one past the limit", nested("[", "]", MAX_JSON_DEPTH + 1)],
    [
      "objects one past the limit",
      `${'{"a":'.repeat(MAX_JSON_DEPTH)}{}${"}".repeat(MAX_JSON_DEPTH)}`,
    ],
    ["4,500 levels", nested("[", "]", 4_500)],
    ["unbalanced deep text", "[".repeat(100_000)],
    ["a string then deep nesting", `["]",${nested("[", "]", MAX_JSON_DEPTH)}]`],
  ];
  for (const [label, text] of refused) {
    test(`refuses ${label} with json_too_deep`, () => {
      assert.throws(
        () => parseJson(text),
        (error) => error instanceof DecodeError && error.code === "json_too_deep",
      );
    });
  }
});
