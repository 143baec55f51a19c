/**
 * The query worker's fast path (src/store/query/expression.ts, fast-batch.ts) against the
 * sandbox it stands in for: for every code of the table, each batch's rows from the fast
 * path are exactly the real QuickJS sandbox's rows, or the fast path gives the batch back
 * (undefined) and the sandbox decides. Code outside the grammar is never compiled, and each
 * case the evaluator cannot match exactly (inherited members, access on null, operators on
 * objects, array outputs over the limit, outputs that could outgrow query_memory_bytes)
 * gives the batch back.
 */

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { compileExpression } from "../../../src/store/query/expression.ts";
import {
  PARSE_EXPANSION,
  RUNTIME_BYTES,
  runFastBatch,
} from "../../../src/store/query/fast-batch.ts";
import { Sandbox } from "../../../src/store/query/sandbox.ts";

const LIMITS = { timeMs: 10_000, memoryBytes: 16 << 20, outputsPerRecord: 4 };

const records = [
  {
    key: "a",
    value: { id: 1, title: "One", tags: ["x", "y"], n: null, s: "héllo", nested: { k: 2 } },
  },
  { key: "b", value: { id: 100, title: "Hundred", tags: [], n: 0, s: "", nested: { k: -0 } } },
  // An own "__proto__", as JSON.parse makes it in both engines.
  {
    key: "c",
    value: JSON.parse('{"id":2.5,"title":"Two and a half","__proto__":7,"s":"\\u2028x"}'),
  },
  { key: "d", value: "just a string" },
  { key: "e", value: [1, 2, 3] },
  { key: "f", value: { id: 1e21, title: "big", tags: ["only"], big: 1.2345678901234567e19 } },
];
const batch = Buffer.from(JSON.stringify(records));

/** Codes the fast path compiles; each runs on the batch above. */
const COMPILED = [
  "(r) => r.value.id % 100 === 0 ? r.value : undefined",
  "(r) => ({ id: r.value.id, title: r.value.title })",
  "r => r.key",
  "(r, args) => r.value.id > args.min && r.value.id <= args.max",
  "(r, args) => ({ args, key: r.key, tags: r.value.tags })",
  "(rec) => rec.value.s ? [rec.key, rec.value.s.length, rec.value.s[0]] : rec.key",
  "(r) => r.value.tags && r.value.tags[0]",
  "(r) => r.value.tags ? r.value.tags.length : -1",
  "(r) => r.value.missing === undefined ? 'x' : 'y'".replace(/'/g, '"'),
  "(r) => !r.value.n || r.value.id / 3",
  '(r) => r.key + "-" + r.value.id * 2 - 1',
  '(r) => ({ "quoted key": r.value.nested, r })',
  '(r) => r.value.title ? r.value["title"] + r.value.title[0] : null',
  "(r) => r.value.id !== 1 && +r.value.id >= 2 /* comment */ // end",
  "(r) => r.value.tags ? r.value.big : 0",
  '(r) => r.key === "c" ? r.value.__proto__ : 0',
  "(r) => r.value[0]",
  // A line comment ends at \r as at \n: this is r.key + 1.
  "(r) => r.key // a comment\r+ 1",
  "(undefinedish) => ({ undefinedish, u: undefined })",
];

/** Codes outside the grammar: the sandbox runs them. */
const NOT_COMPILED = [
  "(r) => { return r.key; }",
  "function (r) { return r.key; }",
  "(r) => r.key.toUpperCase()",
  "(r) => globalThis",
  "(r) => r.value.id == 1",
  "(r) => r.value.id ?? 1",
  "(r) => r.value?.id",
  "(r) => ({ __proto__: r.value })",
  "(r) => ({ ...r.value })",
  "(r) => r.value.id ** 2",
  "(r) => 012",
  "(r) => 'single'",
  "(r) => r.value.a\n++r.value.b",
  "(r) => this",
  "(r) => typeof r",
  "(r) => (r.key, r.value)",
  "({ key }) => key",
  "(r, r) => r",
  "async (r) => r",
  "(r) => `t${r.key}`",
  "(r) => /x/.test(r.key)",
  "(r) => r.key; r.value",
  "(if) => 1",
  "(undefined) => 1",
  "(r) => ({ true })",
  "(r) => ({ key })",
];

/** Compiled, but some record makes the fast path give the whole batch back. */
const GIVEN_BACK = [
  "(r) => r.value.constructor",
  "(r) => r.value.tags.map",
  "(r) => r.value.nested.k",
  "(r) => r.value.n.x",
  "(r) => r.value + 1",
  "(r) => r.value.tags < 2",
  "(r) => r.key.length.x",
  "(r) => [r, r, r, r, r]",
];

const sandboxes: Sandbox[] = [];
after(() => {
  for (const s of sandboxes) s.dispose();
});

async function sandboxRows(code: string, argsJson: string): Promise<unknown> {
  const sandbox = await Sandbox.create(code, argsJson, LIMITS);
  sandboxes.push(sandbox);
  try {
    return JSON.parse(Buffer.from(sandbox.runBatch(batch)).toString());
  } catch (error) {
    return { refused: (error as { code: string }).code };
  }
}

function fastRows(code: string, argsJson: string, limits = LIMITS): unknown {
  const expression = compileExpression(code);
  assert.ok(expression, `compiled: ${code}`);
  const args = { value: JSON.parse(argsJson), bytes: argsJson.length };
  const rows = runFastBatch(expression, args, batch, limits);
  return rows === undefined ? undefined : JSON.parse(Buffer.from(rows).toString());
}

describe("the query fast path", () => {
  const argsJson = JSON.stringify({ min: 1, max: 100 });
  for (const code of COMPILED) {
    test(`the same rows as the sandbox: ${code}`, async () => {
      const fast = fastRows(code, argsJson);
      assert.notEqual(fast, undefined, "the fast path ran the batch");
      assert.deepEqual(fast, await sandboxRows(code, argsJson));
    });
  }

  test("code outside the grammar is left to the sandbox", () => {
    for (const code of NOT_COMPILED) assert.equal(compileExpression(code), undefined, code);
  });

  for (const code of GIVEN_BACK) {
    test(`a batch it cannot match exactly goes to the sandbox: ${code}`, () => {
      assert.equal(fastRows(code, argsJson), undefined);
    });
  }

  test("an array output above query_outputs_per_record goes to the sandbox, which refuses it", async () => {
    const code = "(r) => [r.key, r.key]";
    const limits = { ...LIMITS, outputsPerRecord: 1 };
    const expression = compileExpression(code)!;
    assert.equal(runFastBatch(expression, { value: null, bytes: 4 }, batch, limits), undefined);
    const sandbox = await Sandbox.create(code, "null", limits);
    sandboxes.push(sandbox);
    assert.throws(() => sandbox.runBatch(batch), { code: "query_output_limit" });
  });

  test("outputs that could outgrow query_memory_bytes go to the sandbox", () => {
    const expression = compileExpression("(r) => [r, r]")!;
    const small = { ...LIMITS, memoryBytes: batch.length };
    assert.equal(runFastBatch(expression, { value: null, bytes: 4 }, batch, small), undefined);
    assert.notEqual(runFastBatch(expression, { value: null, bytes: 4 }, batch, LIMITS), undefined);
  });

  test("a batch that might not fit parsed in query_memory_bytes goes to the sandbox", () => {
    const expression = compileExpression("(r) => r.key")!;
    const tight = { ...LIMITS, memoryBytes: RUNTIME_BYTES + batch.length * 10 };
    assert.equal(runFastBatch(expression, { value: null, bytes: 4 }, batch, tight), undefined);
    const roomy = { ...LIMITS, memoryBytes: RUNTIME_BYTES + batch.length * (PARSE_EXPANSION + 8) };
    assert.notEqual(runFastBatch(expression, { value: null, bytes: 4 }, batch, roomy), undefined);
  });

  test("expressions past MAX_NODES or deeply nested are left to the sandbox", () => {
    assert.equal(compileExpression(`(r) => ${"r.key + ".repeat(300)}1`), undefined);
    assert.equal(compileExpression(`(r) => ${"(".repeat(100)}r${")".repeat(100)}`), undefined);
    assert.equal(compileExpression(`(r) => ${"!".repeat(100)}r`), undefined);
  });
});
