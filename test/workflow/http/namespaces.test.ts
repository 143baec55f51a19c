import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { call, serveForSuite, tokenFor } from "../support/server.ts";

describe("namespace endpoints (real skein serve)", () => {
  // Closed auto-create: explicit creation must still work (spec endpoint 9).
  const s = serveForSuite(
    '[namespaces]\ndefault = "home"\nauto_create = "closed"\nmax_in_flight_activities = 7',
  );

  const post = (token: string, body: unknown) =>
    call(s.server.url, "POST", "/namespaces", { token, body: body as object });

  test("the default namespace exists after start-up, even with auto_create closed", async () => {
    const r = await call(s.server.url, "GET", "/namespaces", { token: s.admin });
    assert.equal(r.status, 200);
    assert.ok(r.body.namespaces.some((n: { name: string }) => n.name === "home"));
  });

  const names: [label: string, sent: string, stored: string][] = [
    ["plain", "alpha", "alpha"],
    ["surrounding spaces trimmed", "  beta  ", "beta"],
    ["tabs and newlines trimmed", "\tgamma\n", "gamma"],
    ["inner spaces kept", " my team ", "my team"],
    ["non-ASCII letters and emoji kept", "équipe-\u{1F680}", "équipe-\u{1F680}"],
    ["zero-width joiner kept (emoji sequences need it)", "a\u200Db", "a\u200Db"],
  ];
  for (const [label, sent, stored] of names) {
    test(`POST /namespaces: ${label}`, async () => {
      const first = await post(s.admin, { name: sent });
      assert.equal(first.status, 200);
      assert.deepEqual(first.body, { name: stored, created: true });
      // Idempotent: the same call again answers 200 with created false.
      const again = await post(s.admin, { name: sent });
      assert.equal(again.status, 200);
      assert.deepEqual(again.body, { name: stored, created: false });
    });
  }

  const refusals: [label: string, body: unknown, code: string][] = [
    ["empty name", { name: "" }, "invalid_namespace_name"],
    ["blank name (empty after trimming)", { name: "   \t " }, "invalid_namespace_name"],
    ["name over 255 bytes", { name: "n".repeat(256) }, "invalid_namespace_name"],
    // Control characters inside a name (trimming removes only surrounding whitespace).
    ["NUL inside", { name: "ns\u0000x" }, "invalid_namespace_name"],
    [
      "leading NUL (not whitespace, so not trimmed)",
      { name: "\u0000ns" },
      "invalid_namespace_name",
    ],
    ["newline inside", { name: "a\nb" }, "invalid_namespace_name"],
    ["tab inside", { name: "a\tb" }, "invalid_namespace_name"],
    ["escape (C0)", { name: "a\u001b[31mb" }, "invalid_namespace_name"],
    ["DEL", { name: "a\u007fb" }, "invalid_namespace_name"],
    ["C1 control (NEL)", { name: "a\u0085b" }, "invalid_namespace_name"],
    ["C1 control (CSI)", { name: "a\u009bb" }, "invalid_namespace_name"],
    ["bidi override (RLO)", { name: "abc\u202Excod" }, "invalid_namespace_name"],
    ["bidi isolate (FSI)", { name: "a\u2068b" }, "invalid_namespace_name"],
    ["missing name", {}, "decode_refused"],
    ["name not a string", { name: 5 }, "decode_refused"],
    ["null name", { name: null }, "decode_refused"],
    ["unknown field", { name: "x", color: "red" }, "decode_refused"],
    ["not an object", ["x"], "decode_refused"],
  ];
  for (const [label, body, code] of refusals) {
    test(`POST /namespaces refuses ${label}: 400 ${code}`, async () => {
      const r = await post(s.admin, body);
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, code);
      assert.equal(typeof r.body.error.message, "string");
    });
  }

  test("POST /namespaces needs a grant for that name: 403 otherwise", async () => {
    const token = await tokenFor(s.dir.path, { subject: "carol", namespaces: ["team-a"] });
    const denied = await post(token, { name: "team-b" });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, "forbidden");
    // The grant is checked against the trimmed name.
    const allowed = await post(token, { name: "  team-a " });
    assert.deepEqual([allowed.status, allowed.body], [200, { name: "team-a", created: true }]);
    const records = await call(s.server.url, "GET", "/namespaces/records", { token: s.admin });
    const record = records.body.records.find((r: { name: string }) => r.name === "team-a");
    assert.equal(record.created_by, "carol");
    assert.equal(
      records.body.records.some((r: { name: string }) => r.name === "team-b"),
      false,
    );
  });

  test("listing shows only namespaces the caller is granted", async () => {
    for (const name of ["list-1", "list-2", "list-3"]) await post(s.admin, { name });
    const token = await tokenFor(s.dir.path, { namespaces: ["list-1", "list-3", "absent"] });
    const r = await call(s.server.url, "GET", "/namespaces", { token });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { namespaces: [{ name: "list-1" }, { name: "list-3" }] });
    const none = await tokenFor(s.dir.path, { namespaces: [] });
    assert.deepEqual((await call(s.server.url, "GET", "/namespaces", { token: none })).body, {
      namespaces: [],
    });
  });

  test("records show durable settings, only for granted namespaces", async () => {
    await post(s.admin, { name: "rec-1" });
    await post(s.admin, { name: "rec-2" });
    const token = await tokenFor(s.dir.path, { namespaces: ["rec-2"] });
    const r = await call(s.server.url, "GET", "/namespaces/records", { token });
    assert.equal(r.status, 200);
    assert.equal(r.body.records.length, 1);
    const [record] = r.body.records;
    assert.equal(record.name, "rec-2");
    assert.equal(record.created_by, "admin");
    assert.ok(!Number.isNaN(Date.parse(record.created_at)));
    // The effective ceiling comes from namespaces.max_in_flight_activities.
    // Not in force: outbox.enabled is false in this configuration (spec, Limits 2).
    assert.deepEqual(record.settings, { max_in_flight_activities: 7, ceiling_in_force: false });
  });

  test("an all-namespaces grant sees every namespace, ordered by name", async () => {
    const r = await call(s.server.url, "GET", "/namespaces", { token: s.admin });
    const listed = r.body.namespaces.map((n: { name: string }) => n.name);
    assert.deepEqual(listed, [...listed].sort());
    assert.ok(listed.includes("home") && listed.includes("alpha"));
  });
});
