// The definition language: every step shape decodes with its defaults, refusals point at the
// step and field, expressions evaluate over {input, steps, item}, and the version is a
// content hash of the canonical form (the same workflow in YAML or JSON has one version).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import jsonata from "jsonata";
import { parseJson } from "../../../src/common/decode/index.ts";
import {
  canonicalJson,
  parseDefinition,
  RETRY_DEFAULTS,
  START_TO_CLOSE_DEFAULT_MS,
} from "../../../src/workflow/definitions/index.ts";

const ORDER = `
name: order
task_queue: shop
retry: { max_attempts: 5, initial_backoff_ms: 200 }
deadline_ms: 3600000
steps:
  - id: reserve
    call: { action: reserve, input: "{ 'sku': input.sku, 'qty': input.qty }" }
  - id: charge
    call:
      action: charge
      task_queue: payments
      input: "{ 'amount': steps.reserve.price * input.qty }"
      retry: { max_attempts: 2, non_retryable_codes: [card_declined] }
      start_to_close_ms: 5000
      heartbeat_ms: 1000
  - id: fan
    parallel:
      branches:
        - { id: nap, sleep: { duration_ms: 10 } }
        - { id: approval, wait: { signal: approved, timeout_ms: 60000, on_timeout: continue } }
  - id: ship_each
    collect:
      items: input.lines
      step: { id: ship, call: { action: ship, input: "{ 'line': item }" } }
  - id: invoice
    child: { workflow: invoicing, input: "steps.charge" }
output: "{ 'receipt': steps.charge.id }"
`;

describe("workflow definitions", () => {
  test("every step shape decodes, with document defaults applied to calls", () => {
    const d = parseDefinition(ORDER, "yaml");
    assert.equal(d.name, "order");
    assert.equal(d.deadlineMs, 3_600_000);
    assert.match(d.version, /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(
      d.steps.map((s) => [s.id, s.kind]),
      [
        ["reserve", "call"],
        ["charge", "call"],
        ["fan", "parallel"],
        ["ship_each", "collect"],
        ["invoice", "child"],
      ],
    );
    const [reserve, charge, fan, collect, child] = d.steps;
    assert.ok(reserve?.kind === "call" && charge?.kind === "call");
    assert.equal(reserve.taskQueue, "shop");
    assert.deepEqual(reserve.retry, { ...RETRY_DEFAULTS, maxAttempts: 5, initialBackoffMs: 200 });
    assert.equal(reserve.startToCloseMs, START_TO_CLOSE_DEFAULT_MS);
    assert.equal(reserve.heartbeatMs, 0);
    assert.equal(charge.taskQueue, "payments");
    assert.deepEqual(charge.retry, {
      ...RETRY_DEFAULTS,
      maxAttempts: 2,
      initialBackoffMs: 200,
      nonRetryableCodes: ["card_declined"],
    });
    assert.equal(charge.startToCloseMs, 5000);
    assert.equal(charge.heartbeatMs, 1000);
    assert.ok(fan?.kind === "parallel");
    assert.deepEqual(
      fan.branches.map((b) => b.kind),
      ["sleep", "wait"],
    );
    const wait = fan.branches[1];
    assert.ok(wait?.kind === "wait");
    assert.deepEqual(
      [wait.signal, wait.timeoutMs, wait.onTimeout],
      ["approved", 60000, "continue"],
    );
    assert.ok(collect?.kind === "collect");
    assert.equal(collect.body.id, "ship");
    assert.equal(collect.maxItems, 10_000);
    assert.ok(child?.kind === "child");
    assert.equal(child.workflow, "invoicing");
    assert.equal(child.version, undefined);
  });

  test("expressions evaluate over {input, steps, item}", async () => {
    const d = parseDefinition(ORDER, "yaml");
    const charge = d.steps[1]!;
    const collect = d.steps[3]!;
    assert.ok(charge.kind === "call" && collect.kind === "collect" && collect.body.kind === "call");
    assert.deepEqual(
      await charge.input.evaluate({ input: { qty: 3 }, steps: { reserve: { price: 2.5 } } }),
      {
        amount: 7.5,
      },
    );
    assert.deepEqual(await collect.items.evaluate({ input: { lines: ["a", "b"] }, steps: {} }), [
      "a",
      "b",
    ]);
    assert.deepEqual(await collect.body.input.evaluate({ input: {}, steps: {}, item: "a" }), {
      line: "a",
    });
    assert.deepEqual(await d.output!.evaluate({ input: {}, steps: { charge: { id: 7 } } }), {
      receipt: 7,
    });
    assert.deepEqual(
      await d.output!.evaluate({ input: {}, steps: {} }),
      {},
      "absent fields are left out",
    );
    const a = parseDefinition(
      "name: x\ntask_queue: q\nsteps: [{id: a, call: {action: b, input: steps.none}}]",
      "yaml",
    ).steps[0]!;
    assert.ok(a.kind === "call");
    assert.equal(await a.input.evaluate({ input: {}, steps: {} }), null, "no match is null");
  });

  test("an evaluation error is a typed expression_failed error", async () => {
    const d = parseDefinition(
      "name: x\ntask_queue: q\nsteps: [{id: a, call: {action: b, input: \"$number('x')\"}}]",
      "yaml",
    );
    const a = d.steps[0]!;
    assert.ok(a.kind === "call");
    await assert.rejects(a.input.evaluate({ input: {}, steps: {} }), { code: "expression_failed" });
  });

  test("a call's input defaults to the run's input", async () => {
    const d = parseDefinition(
      '{"name":"x","task_queue":"q","steps":[{"id":"a","call":{"action":"b"}}]}',
      "json",
    );
    const a = d.steps[0]!;
    assert.ok(a.kind === "call");
    assert.deepEqual(await a.input.evaluate({ input: { n: 1 }, steps: {} }), { n: 1 });
  });

  const refusals: [name: string, yaml: string, message: string][] = [
    ["no name", "steps: [{id: a, sleep: {duration_ms: 1}}]", "name: missing required field"],
    ["no steps", "name: x\nsteps: []", "steps: must not be empty"],
    [
      "unknown top-level field",
      "name: x\nversion: 2\nsteps: [{id: a, sleep: {duration_ms: 1}}]",
      "version: unknown field",
    ],
    [
      "unknown step shape",
      "name: x\nsteps: [{id: a, sleep: {duration_ms: 1}}, {id: b, frobnicate: {}}]",
      "steps[1]: unknown step shape: expected exactly one of call, parallel, collect, child, wait, sleep; found frobnicate",
    ],
    [
      "two shapes in one step",
      "name: x\nsteps: [{id: a, sleep: {duration_ms: 1}, wait: {signal: s}}]",
      "steps[0]: unknown step shape: expected exactly one of call, parallel, collect, child, wait, sleep; found sleep, wait",
    ],
    [
      "missing step id",
      "name: x\nsteps: [{sleep: {duration_ms: 1}}]",
      "steps[0].id: missing required field",
    ],
    [
      "step id not an identifier",
      "name: x\nsteps: [{id: 2nd, sleep: {duration_ms: 1}}]",
      "steps[0].id: must be letters, digits and '_'",
    ],
    [
      "duplicate step id",
      "name: x\nsteps: [{id: a, sleep: {duration_ms: 1}}, {id: b, sleep: {duration_ms: 1}}, {id: a, sleep: {duration_ms: 2}}]",
      'steps[2].id: duplicate step id "a" (first at steps[0])',
    ],
    [
      "duplicate step id inside a parallel",
      "name: x\nsteps: [{id: p, parallel: {branches: [{id: q, sleep: {duration_ms: 1}}, {id: q, sleep: {duration_ms: 1}}]}}]",
      'steps[0].parallel.branches[1].id: duplicate step id "q" (first at steps[0].parallel.branches[0])',
    ],
    [
      "duplicate step id in a collect body",
      "name: x\nsteps: [{id: c, collect: {items: input, step: {id: c, sleep: {duration_ms: 1}}}}]",
      'steps[0].collect.step.id: duplicate step id "c" (first at steps[0])',
    ],
    [
      "bad JSONata expression",
      "name: x\ntask_queue: q\nsteps: [{id: a, call: {action: x}}, {id: b, call: {action: y}}, {id: c, call: {action: z, input: 'steps.a +'}}]",
      "steps[2].call.input: bad JSONata expression: Unexpected end of expression (at position 9)",
    ],
    [
      "bad output expression",
      "name: x\nsteps: [{id: a, sleep: {duration_ms: 1}}]\noutput: '{'",
      "output: bad JSONata expression",
    ],
    [
      "call without a task queue anywhere",
      "name: x\nsteps: [{id: a, call: {action: x}}]",
      "steps[0].call.task_queue: missing task_queue (and the document sets no default)",
    ],
    [
      "unknown field in a call",
      "name: x\ntask_queue: q\nsteps: [{id: a, call: {action: x, timeout: 5}}]",
      "steps[0].call.timeout: unknown field",
    ],
    [
      "max_attempts of 0",
      "name: x\ntask_queue: q\nsteps: [{id: a, call: {action: x, retry: {max_attempts: 0}}}]",
      "steps[0].call.retry.max_attempts: must be between 1 and 10000, found 0",
    ],
    [
      "max backoff below initial",
      "name: x\ntask_queue: q\nsteps: [{id: a, call: {action: x, retry: {initial_backoff_ms: 5000, max_backoff_ms: 10}}}]",
      "steps[0].call.retry.max_backoff_ms: must be at least initial_backoff_ms (5000), found 10",
    ],
    [
      "backoff coefficient below 1",
      "name: x\ntask_queue: q\nsteps: [{id: a, call: {action: x, retry: {backoff_coefficient: 0.5}}}]",
      "steps[0].call.retry.backoff_coefficient: must be at least 1, found 0.5",
    ],
    [
      "zero sleep",
      "name: x\nsteps: [{id: a, sleep: {duration_ms: 0}}]",
      "steps[0].sleep.duration_ms: must be between 1 and 315360000000, found 0",
    ],
    [
      "fractional timeout",
      "name: x\ntask_queue: q\nsteps: [{id: a, call: {action: x, start_to_close_ms: 1.5}}]",
      "steps[0].call.start_to_close_ms: expected a whole number",
    ],
    [
      "wait on_timeout outside its set",
      "name: x\nsteps: [{id: a, wait: {signal: s, on_timeout: ignore}}]",
      'steps[0].wait.on_timeout: must be one of "fail", "continue", found "ignore"',
    ],
    [
      "child version not a hash",
      "name: x\nsteps: [{id: a, child: {workflow: y, version: v2}}]",
      "steps[0].child.version: must be sha256:<64 hex digits>",
    ],
    [
      "empty parallel",
      "name: x\nsteps: [{id: a, parallel: {branches: []}}]",
      "steps[0].parallel.branches: must not be empty",
    ],
    ["YAML syntax", "name: x\n  steps: [", "not valid YAML"],
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

  test("the version is the same for the same workflow in YAML and JSON, key order aside", () => {
    const yaml = parseDefinition("name: x\nsteps: [{id: a, sleep: {duration_ms: 1000}}]", "yaml");
    const json = parseDefinition(
      '{"steps":[{"sleep":{"duration_ms":1000},"id":"a"}],"name":"x"}',
      "json",
    );
    assert.equal(yaml.version, json.version);
    assert.equal(yaml.canonical, '{"name":"x","steps":[{"id":"a","sleep":{"duration_ms":1000}}]}');
    const other = parseDefinition("name: x\nsteps: [{id: a, sleep: {duration_ms: 1001}}]", "yaml");
    assert.notEqual(other.version, yaml.version);
  });

  const canonical: [json: string, text: string][] = [
    ['{"b":1,"a":[true,null,"s"]}', '{"a":[true,null,"s"],"b":1}'],
    ["[1.50, 1e2, 18446744073709551615, -0.0]", "[1.5,100,18446744073709551615,0]"],
    ['{"é":1,"e":2,"Z":3}', '{"Z":3,"e":2,"é":1}'],
  ];
  for (const [json, text] of canonical) {
    test(`canonical form of ${json}`, () => assert.equal(canonicalJson(parseJson(json)), text));
  }
});

describe("JSON literal expressions", () => {
  const rows: [source: string, value: unknown][] = [
    ["{}", {}],
    ['{"a": [1, 2.5, "x"], "b": null}', { a: [1, 2.5, "x"], b: null }],
    ["42", 42],
    ['"text"', "text"],
    ["true", true],
  ];
  for (const [source, value] of rows) {
    test(`${source} evaluates to itself, as JSONata would`, async () => {
      const d = parseDefinition(
        JSON.stringify({
          name: "x",
          task_queue: "q",
          steps: [{ id: "a", call: { action: "b", input: source } }],
        }),
        "json",
      );
      const a = d.steps[0]!;
      assert.ok(a.kind === "call");
      const got = await a.input.evaluate({ input: {}, steps: {} });
      assert.deepEqual(got, value);
      const viaJsonata = await jsonata(source).evaluate({});
      assert.deepEqual(JSON.parse(JSON.stringify(viaJsonata)), value);
    });
  }
});
