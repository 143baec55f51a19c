// A definition's `input_schema` (JSON Schema 2020-12 of an object): what registration refuses
// (with `invalid_definition` naming the field) and how the compiled schema judges inputs.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseJson } from "../../../src/common/decode/index.ts";
import { decodeDefinition } from "../../../src/workflow/definitions/index.ts";

const STEPS = [{ id: "s", sleep: { duration_ms: 1 } }];

const withSchema = (schema: unknown) =>
  decodeDefinition(parseJson(JSON.stringify({ name: "d", input_schema: schema, steps: STEPS })));

function refusal(schema: unknown): string {
  try {
    withSchema(schema);
  } catch (error) {
    assert.equal((error as { code: string }).code, "invalid_definition");
    return (error as Error).message;
  }
  assert.fail("the schema was accepted");
}

describe("input_schema", () => {
  test("absent: no schema, any input", () => {
    const d = decodeDefinition(parseJson(JSON.stringify({ name: "d", steps: STEPS })));
    assert.equal(d.inputSchema, undefined);
  });

  test("a schema judges inputs, naming the failing paths", () => {
    const d = withSchema({
      type: "object",
      properties: {
        n: { type: "integer", minimum: 1 },
        at: { type: "string", format: "date-time" },
      },
      required: ["n"],
      additionalProperties: false,
    });
    assert.deepEqual(d.inputSchema?.schema.required, ["n"]);
    assert.equal(d.inputSchema?.check({ n: 2, at: "2026-05-01T12:00:00Z" }), undefined);
    assert.equal(d.inputSchema?.check({ n: 0 }), "input.n must be >= 1");
    assert.equal(
      d.inputSchema?.check({ n: 1, at: "soon" }),
      'input.at must match format "date-time"',
    );
    assert.match(d.inputSchema?.check({}) ?? "", /input must have required property 'n'/);
    assert.match(d.inputSchema?.check({ n: 1, x: 1 }) ?? "", /must NOT have additional properties/);
  });

  test("lossless numbers in the document are plain numbers to the schema", () => {
    const d = decodeDefinition(
      parseJson(
        `{"name":"d","input_schema":{"type":"object","properties":{"n":{"maximum":1.50}}},"steps":${JSON.stringify(STEPS)}}`,
      ),
    );
    assert.equal(d.inputSchema?.check({ n: 1.5 }), undefined);
    assert.match(d.inputSchema?.check({ n: 2 }) ?? "", /input.n must be <= 1.5/);
  });

  test("patterns run on the linear-time engine: a nested quantifier cannot backtrack", () => {
    const d = withSchema({
      type: "object",
      properties: { s: { type: "string", pattern: "^(a+)+$" } },
      patternProperties: { "^(x+)+y$": { type: "integer" } },
    });
    // With backtracking, each of these takes longer than the age of the universe.
    const evil = `${"a".repeat(64)}!`;
    assert.match(d.inputSchema?.check({ s: evil }) ?? "", /input.s must match pattern/);
    assert.equal(d.inputSchema?.check({ s: "aaa" }), undefined);
    assert.equal(d.inputSchema?.check({ [`${"x".repeat(64)}!`]: "not checked" }), undefined);
  });

  test("a pattern the linear-time engine cannot run (a backreference) is refused", () => {
    const message = refusal({
      type: "object",
      properties: { s: { type: "string", pattern: "^(a)\\1$" } },
    });
    assert.match(message, /input_schema/);
  });

  test("the same $id registered twice compiles twice (nothing is kept by the compiler)", () => {
    const schema = { $id: "https://example.com/in", type: "object" };
    withSchema(schema);
    assert.doesNotThrow(() => withSchema(schema));
  });

  const refused: [label: string, schema: unknown, message: RegExp][] = [
    ["not an object", [1], /^input_schema: expected JSON Schema object, found array/],
    ["a schema of something else than an object", { type: "array" }, /must declare type "object"/],
    ["no type", { properties: {} }, /must declare type "object"/],
    [
      "another dialect",
      { $schema: "http://json-schema.org/draft-07/schema#", type: "object" },
      /\$schema must be https:\/\/json-schema.org\/draft\/2020-12\/schema/,
    ],
    ["an unknown keyword", { type: "object", requried: ["a"] }, /unknown keyword: "requried"/],
    [
      "a keyword of the wrong type",
      { type: "object", minProperties: "2" },
      /not a usable JSON Schema/,
    ],
    [
      "a reference nothing resolves",
      { type: "object", properties: { a: { $ref: "https://example.com/remote.json" } } },
      /can't resolve reference/,
    ],
    [
      "longer than 64 KiB",
      { type: "object", description: "x".repeat(70_000) },
      /longer than 65536 bytes/,
    ],
  ];
  for (const [label, schema, message] of refused) {
    test(`refuses ${label}`, () => assert.match(refusal(schema), message));
  }
});
