// Every JSONata evaluation is bounded: each pathological expression below fails with
// `expression_failed` and a message naming the limit it hit, ordinary expressions still
// evaluate (on the evaluator thread and inline), a hang does not fail the evaluations queued
// behind it, and registration refuses what can be refused statically.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import jsonata from "jsonata";
import {
  INLINE_NODE_LIMIT,
  runsInline,
} from "../../../src/workflow/definitions/expression-inline.ts";
import {
  compileExpression,
  EXPRESSION_NESTING_LIMIT,
  EXPRESSION_RESULT_LIMIT,
  parseDefinition,
  type Scope,
} from "../../../src/workflow/definitions/index.ts";

const SCOPE: Scope = {
  input: { sku: "A-1", qty: 3, xs: [1, 2, 3], s: `${"a".repeat(40)}!` },
  steps: { reserve: { price: 2.5 }, fetch: { body: { items: [{ n: 1 }, { n: 2 }] } } },
  item: 7,
};

describe("evaluation bounds", () => {
  const pathological: [name: string, source: string, limit: RegExp][] = [
    ["the issue's endless tail recursion", "($f := function($x){ $f($x) }; $f(1))", /time limit/],
    ["endless non-tail recursion", "($f := function($x){ 1 + $f($x) }; $f(1))", /depth limit/],
    [
      "deep finite recursion",
      "($f := function($n){ $n = 0 ? 0 : 1 + $f($n - 1) }; $f(100000))",
      /depth limit/,
    ],
    ["a huge loop", "[1..10000000].$string()", /sequence limit/],
    ["an enormous range", "$count([0..1e12])", /sequence limit/],
    [
      "a sequence doubled per step",
      "$reduce([1..40], function($a, $i){ $append($a, $a) }, [1])",
      /sequence limit/,
    ],
    ["a loop of native calls", "$count([1..1000000].$pad('', 1000 + $))", /time limit/],
    ["a giant string", '$pad("", 1e9)', /Invalid string length/],
    // Which bound stops it first depends on how fast the machine builds the string.
    [
      "a half-gigabyte string in one native call",
      '$pad("", 5e8)',
      /time limit|memory limit|size limit/,
    ],
    [
      "a string doubled per step",
      "$length($reduce([1..28], function($a, $i){ $a & $a }, 'x'))",
      /time limit|memory limit/,
    ],
    [
      "an object whose shared subtrees expand to 2^60 nodes",
      "$reduce([1..60], function($a, $i){ {'l': $a, 'r': $a} }, 1)",
      /time limit|size limit|Invalid string length/,
    ],
  ];
  for (const [name, source, limit] of pathological) {
    test(`fails with expression_failed: ${name}`, async () => {
      await assert.rejects(
        compileExpression(source).evaluate(SCOPE),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, "expression_failed");
          assert.match(error.message, limit);
          return true;
        },
      );
    });
  }

  test("fails with expression_failed: a result larger than the size limit", async () => {
    const big = "x".repeat(EXPRESSION_RESULT_LIMIT / 2);
    // Inline, and on the evaluator thread (`$pad` sends it there).
    for (const source of ["[input, input]", "[input, input, $pad('', 1)]"]) {
      await assert.rejects(
        compileExpression(source).evaluate({ input: big, steps: {} }),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, "expression_failed");
          assert.match(error.message, /size limit/);
          return true;
        },
      );
    }
    assert.deepEqual(await compileExpression("[input]").evaluate({ input: big, steps: {} }), [big]);
  });

  test("a catastrophic regex runs in linear time", async () => {
    assert.equal(await compileExpression("$match(input.s, /(a+)+$/)").evaluate(SCOPE), null);
    assert.equal(await compileExpression("$contains(input.s, /(a|aa)*!/)").evaluate(SCOPE), true);
  });

  const ordinary: [source: string, value: unknown][] = [
    ["input", SCOPE.input],
    ["steps.fetch.body.items", [{ n: 1 }, { n: 2 }]],
    ["item", 7],
    ["input.missing", null],
    ["{ 'sku': input.sku, 'qty': input.qty }", { sku: "A-1", qty: 3 }],
    ["steps.reserve.price * input.qty", 7.5],
    ["steps.fetch.body.items.n", [1, 2]],
    ["$sum(input.xs)", 6],
    ["$map(input.xs, function($v){ $v * 2 })", [2, 4, 6]],
    ["($f := function($n){ $n <= 1 ? 1 : $n * $f($n - 1) }; $f(10))", 3628800],
    ["$count([1..100000])", 100000],
    ['$replace("a-b-c", /-/, "+")', "a+b+c"],
    ['$split("a1b22c", /[0-9]+/)', ["a", "b", "c"]],
    ["{ 'n': item }", { n: 7 }],
  ];
  for (const [source, value] of ordinary) {
    test(`evaluates: ${source}`, async () => {
      assert.deepEqual(await compileExpression(source).evaluate(SCOPE), value);
    });
  }

  test("a hang fails only itself: evaluations queued behind it succeed", async () => {
    const [hang, ...rest] = await Promise.allSettled([
      compileExpression('$pad("", 5e8)').evaluate(SCOPE),
      ...Array.from({ length: 20 }, (_, i) =>
        compileExpression(`input.qty + ${i}`).evaluate(SCOPE),
      ),
    ]);
    assert.equal(hang!.status, "rejected");
    assert.deepEqual(
      rest.map((r) => (r.status === "fulfilled" ? r.value : r.reason)),
      Array.from({ length: 20 }, (_, i) => 3 + i),
    );
  });
});

/** Array constructors nested `depth` deep around `item` (not a JSON constant). */
const nested = (depth: number) => `${"[".repeat(depth)}item${"]".repeat(depth)}`;

describe("which expressions run inline (bounded by their size and the scope's)", () => {
  const rows: [source: string, inline: boolean][] = [
    ["input", true],
    ["{ 'sku': input.sku, 'qty': input.qty, 'n': -1 }", true],
    ["steps.reserve.price * input.qty > 5 ? 'big' : 'small'", true],
    ["$count(input.xs[$number(n) > 1]) & '-' & $string(item)", true],
    ["[input.a, steps.b][0]", false],
    ["($f := function($x){ $f($x) }; $f(1))", false],
    ["$map(input.xs, $string)", false],
    ["$match(input.s, /a/)", false],
    ["[1..3]", false],
    ["$pad('', 10)", false],
    ["$join(input.xs, input.sep)", false],
    ["input.xs.[$, $]", false],
    ["$$.input", false],
    [
      `{ ${Array.from({ length: INLINE_NODE_LIMIT }, (_, i) => `'k${i}': ${i}`).join(", ")} }`,
      false,
    ],
  ];
  for (const [source, inline] of rows) {
    test(`${inline ? "inline" : "evaluator thread"}: ${source.slice(0, 60)}`, () => {
      assert.equal(runsInline(jsonata(source).ast()), inline);
    });
  }
});

describe("registration refuses what is refusable statically", () => {
  const refusals: [name: string, yaml: string, message: string][] = [
    [
      "a regex with a backreference",
      "name: x\nsteps: [{id: a, sleep: {duration_ms: 1}}]\noutput: '$match(input.s, /(a)\\1/)'",
      "output: bad JSONata expression: regex /(a)\\1/ cannot run in linear time",
    ],
    [
      "a regex with nested counted repetitions",
      "name: x\nsteps: [{id: c, collect: {items: '$split(input, /(?:a{1000}){1000}/)', step: {id: s, sleep: {duration_ms: 1}}}}]",
      "steps[0].collect.items: bad JSONata expression: regex /(?:a{1000}){1000}/ cannot run in linear time",
    ],
    [
      "a syntax tree nested too deep",
      `name: x\nsteps: [{id: a, sleep: {duration_ms: 1}}]\noutput: '${nested(EXPRESSION_NESTING_LIMIT + 1)}'`,
      `output: bad JSONata expression: nests deeper than the limit of ${EXPRESSION_NESTING_LIMIT} levels`,
    ],
    [
      "a source larger than 64 KiB",
      `name: x\nsteps: [{id: a, sleep: {duration_ms: 1}}]\noutput: '${"1 + ".repeat(20_000)}1'`,
      "output:",
    ],
  ];
  for (const [name, yaml, message] of refusals) {
    test(`refused: ${name}`, () => {
      assert.throws(
        () => parseDefinition(yaml, "yaml"),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, "invalid_definition");
          assert.ok(
            error.message.startsWith(message),
            `${error.message}\n  does not start with\n${message}`,
          );
          return true;
        },
      );
    });
  }

  test("nesting within the limit is accepted", async () => {
    const depth = Math.floor(EXPRESSION_NESTING_LIMIT / 2);
    let value: unknown = 7;
    for (let i = 0; i < depth; i++) value = [value];
    assert.deepEqual(await compileExpression(nested(depth)).evaluate(SCOPE), value);
  });
});
