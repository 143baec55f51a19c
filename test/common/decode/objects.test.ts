import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  absolutePath,
  array,
  boolean,
  child,
  decode,
  durationMs,
  durationSeconds,
  nullable,
  object,
  oneOf,
  optional,
  parseJson,
  refine,
  refuse,
  string,
  stringMap,
  tagged,
  u64,
  withCode,
  withDefault,
} from "../../../src/common/decode/index.ts";

const keep = object({
  versions: nullable(u64({ min: 1 })),
  days: nullable(u64({ max: 36500 })),
});
const retention = object({
  release_max_rows: withDefault(u64({ min: 1, max: 65536 }), 1024n),
  keep: optional(keep),
});
const config = object({
  data_dir: absolutePath(),
  name: optional(nullable(string({ minBytes: 1, maxBytes: 128 }))),
  retention: withDefault(retention, { release_max_rows: 1024n, keep: undefined }),
});

function refusal(json: string) {
  const r = decode(config, parseJson(json));
  assert.equal(r.ok, false, "expected a refusal");
  return r.ok ? assert.fail() : r.error;
}

describe("objects", () => {
  test("defaults fill absent fields and the value is typed", () => {
    const r = decode(config, parseJson('{"data_dir":"/srv/store"}'));
    assert.deepEqual(r, {
      ok: true,
      value: {
        data_dir: "/srv/store",
        name: undefined,
        retention: { release_max_rows: 1024n, keep: undefined },
      },
    });
  });

  const rows: [name: string, json: string, kind: string, message: string][] = [
    [
      "missing required field",
      "{}",
      "missing",
      "data_dir: missing required field (absolute path string)",
    ],
    ["unknown top-level field", '{"data_dir":"/a","extra":1}', "unknown", "extra: unknown field"],
    [
      "unknown nested field",
      '{"data_dir":"/a","retention":{"keep":{"versions":1,"days":1,"hours":2}}}',
      "unknown",
      "retention.keep.hours: unknown field",
    ],
    [
      "out of range nested field",
      '{"data_dir":"/a","retention":{"keep":{"versions":1,"days":36501}}}',
      "range",
      "retention.keep.days: must be between 0 and 36500, found 36501",
    ],
    [
      "zero where positive",
      '{"data_dir":"/a","retention":{"keep":{"versions":0,"days":null}}}',
      "range",
      "retention.keep.versions: must be at least 1, found 0",
    ],
    [
      "null where the field does not take null",
      '{"data_dir":"/a","retention":null}',
      "null",
      "retention: null is not accepted; expected object",
    ],
    [
      "wrong type",
      '{"data_dir":5}',
      "type",
      "data_dir: expected absolute path string, found number",
    ],
    ["relative path", '{"data_dir":"rel/dir"}', "shape", "data_dir: must be an absolute path"],
    ["not an object", "[]", "type", "expected object, found array"],
    [
      "string too long",
      `{"data_dir":"/a","name":"${"é".repeat(65)}"}`,
      "shape",
      "name: must be at most 128 bytes, found 130",
    ],
    ["empty string", '{"data_dir":"/a","name":""}', "shape", "name: must not be empty"],
  ];
  for (const [name, json, kind, message] of rows) {
    test(name, () => {
      const error = refusal(json);
      assert.equal(error.kind, kind);
      assert.equal(error.message, message);
      assert.equal(error.code, "decode_refused");
    });
  }

  test("null is accepted where the field says so", () => {
    const r = decode(
      config,
      parseJson('{"data_dir":"/a","name":null,"retention":{"keep":{"versions":null,"days":3}}}'),
    );
    assert.ok(r.ok);
    assert.equal(r.value.name, null);
    assert.equal(r.value.retention.keep?.versions, null);
  });

  test("a __proto__ key is an unknown field, not a prototype", () => {
    assert.equal(
      refusal('{"data_dir":"/a","__proto__":{"x":1}}').message,
      "__proto__: unknown field",
    );
  });

  test("duplicate keys are refused", () => {
    assert.throws(() => parseJson('{"data_dir":"/a","data_dir":"/b"}'), {
      kind: "type",
      message: /^not valid JSON: Duplicate key 'data_dir'/,
    });
  });

  test("cross-field rules name the field", () => {
    const pair = object(
      { low: u64(), high: u64() },
      {
        check: (v, path) => {
          if (v.high < v.low) refuse("rule", child(path, "high"), "must be at least low");
        },
      },
    );
    const r = decode(object({ limits: pair }), parseJson('{"limits":{"low":5,"high":4}}'));
    assert.equal(r.ok ? "" : r.error.message, "limits.high: must be at least low");
  });

  test("inspect sees which fields are present before they decode", () => {
    const group = object(
      { a: optional(u64()), b: optional(u64()) },
      {
        inspect: (raw, path) => {
          const present = ["a", "b"].filter((k) => Object.hasOwn(raw, k));
          if (present.length === 1)
            refuse(
              "rule",
              path,
              `missing settings: ${["a", "b"].filter((k) => !present.includes(k)).join(", ")}`,
            );
        },
      },
    );
    assert.equal(decode(group, parseJson('{"a":1}')).ok, false);
    assert.ok(decode(group, parseJson("{}")).ok);
    assert.ok(decode(group, parseJson('{"a":1,"b":2}')).ok);
  });
});

describe("codes", () => {
  const name = withCode(
    refine(string({ minBytes: 1, maxBytes: 128 }), (s) =>
      s.includes("/") ? "must not contain /" : undefined,
    ),
    "invalid_store_name",
  );
  const kinded = withCode(u64({ min: 1 }), { range: "keep_ceiling_zero" });

  test("a field's code is stamped on every refusal inside it", () => {
    for (const json of ['"a/b"', '""', "5", "null"]) {
      const r = decode(object({ name }), parseJson(`{"name":${json}}`));
      assert.equal(r.ok ? "" : r.error.code, "invalid_store_name", json);
      assert.match(r.ok ? "" : r.error.message, /^name: /);
    }
  });

  test("a code table stamps only the kinds it names", () => {
    const zero = decode(object({ k: kinded }), parseJson('{"k":0}'));
    assert.equal(zero.ok ? "" : zero.error.code, "keep_ceiling_zero");
    const type = decode(object({ k: kinded }), parseJson('{"k":"x"}'));
    assert.equal(type.ok ? "" : type.error.code, "decode_refused");
  });

  test("an inner code wins over an outer one", () => {
    const outer = withCode(object({ name }), "outer_code");
    const r = decode(outer, parseJson('{"name":"a/b"}'));
    assert.equal(r.ok ? "" : r.error.code, "invalid_store_name");
  });
});

describe("arrays, maps, enums, booleans", () => {
  test("array items are decoded at their index", () => {
    const r = decode(object({ xs: array(u64(), { min: 1 }) }), parseJson('{"xs":[1,2,-3]}'));
    assert.equal(r.ok ? "" : r.error.message, "xs[2]: must not be negative (u64), found -3");
    const empty = decode(array(u64(), { min: 1 }), parseJson("[]"));
    assert.equal(empty.ok ? "" : empty.error.message, "must not be empty");
  });

  test("map keys are checked and odd keys are quoted in the path", () => {
    const stores = stringMap(absolutePath(), {
      min: 1,
      key: string({
        pattern: /^[A-Za-z0-9_-]+$/,
        patternReason: "store names use letters, digits, - or _",
      }),
    });
    const ok = decode(stores, parseJson('{"main":"/run/a.sock","__proto__":"/run/b.sock"}'));
    assert.ok(ok.ok);
    assert.equal(ok.value.get("main"), "/run/a.sock");
    const bad = decode(object({ stores }), parseJson('{"stores":{"a b":"/x"}}'));
    assert.equal(
      bad.ok ? "" : bad.error.message,
      'stores."a b": store names use letters, digits, - or _',
    );
    const rel = decode(object({ stores }), parseJson('{"stores":{"main":"x.sock"}}'));
    assert.equal(rel.ok ? "" : rel.error.message, "stores.main: must be an absolute path");
  });

  test("enums and booleans", () => {
    const d = object({ desired: oneOf(["running", "stopped"]), on: boolean() });
    assert.ok(decode(d, parseJson('{"desired":"running","on":false}')).ok);
    const bad = decode(d, parseJson('{"desired":"paused","on":false}'));
    assert.equal(
      bad.ok ? "" : bad.error.message,
      'desired: must be one of "running", "stopped", found "paused"',
    );
    const notBool = decode(d, parseJson('{"desired":"running","on":"yes"}'));
    assert.equal(notBool.ok ? "" : notBool.error.kind, "type");
  });
});

describe("tagged unions", () => {
  const kind = tagged("kind", {
    Cancel: { reason: string() },
    InjectMessage: { text: string(), priority: tagged("priority", { Normal: {}, Interrupt: {} }) },
    UpdateBudget: { max_tokens: nullable(u64()), max_turns: nullable(u64()) },
  });

  test("each variant decodes with its tag", () => {
    const r = decode(
      kind,
      parseJson('{"kind":"InjectMessage","text":"hi","priority":{"priority":"Interrupt"}}'),
    );
    assert.deepEqual(r, {
      ok: true,
      value: { kind: "InjectMessage", text: "hi", priority: { priority: "Interrupt" } },
    });
  });

  const rows: [string, string][] = [
    ['{"reason":"x"}', "kind: missing required tag"],
    [
      '{"kind":"Explode"}',
      'kind: must be one of "Cancel", "InjectMessage", "UpdateBudget", found "Explode"',
    ],
    ['{"kind":7}', "kind: expected one of"],
    ['{"kind":"Cancel","reason":"x","extra":1}', "extra: unknown field"],
    ['{"kind":"Cancel","reason":5}', "reason: expected string, found number"],
    ['{"kind":"UpdateBudget","max_tokens":null}', "max_turns: missing required field"],
  ];
  for (const [json, message] of rows) {
    test(`refuses ${json}`, () => {
      const r = decode(kind, parseJson(json));
      assert.ok(!r.ok && r.error.message.startsWith(message), r.ok ? "accepted" : r.error.message);
    });
  }
});

describe("monotonic-clock durations", () => {
  const U64_MAX = 18446744073709551615n;
  const now = () => 1_000_000_000n; // one second after the clock's origin
  const largestMs = (U64_MAX - 1_000_000_000n) / 1_000_000n;
  const timeout = durationMs({
    now,
    clockReason: "timeout cannot be represented by the monotonic clock",
  });

  const rows: [string, bigint | string][] = [
    ["1", 1n],
    [`${largestMs}`, largestMs],
    [`${largestMs + 1n}`, "clock"],
    ["18446744073709551615", "clock"],
    ["18446744073709551616", "overflow"],
    ["0", "range"],
  ];
  for (const [json, outcome] of rows) {
    test(`timeout_ms ${json}`, () => {
      const r = decode(object({ timeout_ms: timeout }), parseJson(`{"timeout_ms":${json}}`));
      if (typeof outcome === "bigint")
        assert.deepEqual(r, { ok: true, value: { timeout_ms: outcome } });
      else assert.equal(r.ok ? "" : r.error.kind, outcome);
    });
  }

  test("the clock refusal carries the field's own words", () => {
    const r = decode(
      object({ timeout_ms: timeout }),
      parseJson('{"timeout_ms":18446744073709551615}'),
    );
    assert.match(
      r.ok ? "" : r.error.message,
      /^timeout_ms: timeout cannot be represented by the monotonic clock/,
    );
  });

  test("seconds overflow sooner than milliseconds", () => {
    const secondsLimit = (U64_MAX - 1_000_000_000n) / 1_000_000_000n;
    const d = object({ s: durationSeconds({ now }) });
    assert.ok(decode(d, parseJson(`{"s":${secondsLimit}}`)).ok);
    assert.equal(decode(d, parseJson(`{"s":${secondsLimit + 1n}}`)).ok, false);
  });
});
