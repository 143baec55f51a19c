// A definition's `input_schema` through the real server: registration refuses a schema that
// does not compile, a start whose input does not conform is 400 `invalid_input` and records
// no run, a conforming one starts, and the stored document keeps the schema.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { call, serveForSuite } from "../support/server.ts";

const s = serveForSuite('[namespaces]\ndefault = "default"');
const api = (path: string, body: object) =>
  call(s.server.url, "POST", path, { token: s.admin, body });

const REFUND = {
  name: "refund",
  input_schema: {
    type: "object",
    properties: { order_id: { type: "integer", minimum: 1 }, reason: { type: "string" } },
    required: ["order_id"],
    additionalProperties: false,
  },
  steps: [{ id: "w", wait: { signal: "go" } }],
};

describe("input_schema over HTTP", () => {
  test("registration refuses a schema that is not a usable object schema", async () => {
    const r = await api("/workflows/definitions", {
      definition: { ...REFUND, input_schema: { type: "object", requried: ["x"] } },
    });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, "invalid_definition");
    assert.match(r.body.error.message, /^input_schema: .*unknown keyword: "requried"/);
  });

  test("a start is checked against the schema before anything is recorded", async () => {
    const registered = await api("/workflows/definitions", { definition: REFUND });
    assert.equal(registered.status, 200, JSON.stringify(registered.body));

    for (const input of [{}, { order_id: 0 }, { order_id: 1, extra: true }, { order_id: "7" }]) {
      const r = await api("/workflows/start", { name: "refund", input });
      assert.equal(r.status, 400, JSON.stringify(input));
      assert.equal(r.body.error.code, "invalid_input");
      assert.match(
        r.body.error.message,
        /^the input does not satisfy the input_schema of "refund": input/,
      );
    }
    const none = await api("/workflows/list", { definition: "refund" });
    assert.deepEqual(none.body.runs, [], "a refused start records no run");

    const ok = await api("/workflows/start", { name: "refund", input: { order_id: 7 } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const runs = await api("/workflows/list", { definition: "refund" });
    assert.equal(runs.body.runs.length, 1);

    const versions = await call(
      s.server.url,
      "GET",
      "/workflows/definitions/versions?name=refund",
      { token: s.admin },
    );
    assert.deepEqual(versions.body.versions[0].document.input_schema, REFUND.input_schema);
  });

  test("a definition without a schema takes any input", async () => {
    const { input_schema: _, ...plain } = { ...REFUND, name: "plain" };
    assert.equal((await api("/workflows/definitions", { definition: plain })).status, 200);
    const r = await api("/workflows/start", { name: "plain", input: { anything: [1, "two"] } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });
});
