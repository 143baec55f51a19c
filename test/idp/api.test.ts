/**
 * The AuthZEN and placement APIs of a real skein-idp process: who may ask what (the app
 * token within its database, a pass only about itself, nothing without a valid bearer),
 * batch semantics (defaults, the three `evaluations_semantic`s, the 1,000 bound), strict
 * bodies, and the placement API with its authentication failures.
 */

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { generateKeyPair, SignJWT } from "jose";
import { accessToken, idpHome, postJson, resources as r, startIdp } from "./fixture.ts";

describe("skein-idp AuthZEN and placement APIs (real process, real HTTP)", async () => {
  const home = await idpHome();
  const appSecret = await home.client("app", "--app", "shop");
  const otherAppSecret = await home.client("other-app", "--app", "other");
  const agentSecret = await home.client("agent");
  await home.user("alice", "alice-password");
  await home.grant("user:alice", "read", "db/shop");
  await home.grant("client:agent", "write", "db/shop");
  const idp = await startIdp(home.dataDir);
  const evaluation = `${idp.issuer}/access/v1/evaluation`;
  const evaluations = `${idp.issuer}/access/v1/evaluations`;
  const app = await accessToken(idp.issuer, "app", appSecret, "shop");
  const agent = await accessToken(idp.issuer, "agent", agentSecret, "shop");
  const agentOther = await accessToken(idp.issuer, "agent", agentSecret, "other");
  const appForOther = await accessToken(idp.issuer, "app", appSecret, "other");
  const otherApp = await accessToken(idp.issuer, "other-app", otherAppSecret, "other");
  const alice = { type: "user", id: "alice" };
  const get = { name: "document.get" };
  const put = { name: "document.put" };
  const record = r.record("shop", "notes", "main", "k");

  const code = (body: Record<string, unknown>) => (body.error as { code: string }).code;

  test("the app token asks about anyone, only within its database", async () => {
    assert.deepEqual(
      await postJson(evaluation, app, { subject: alice, action: get, resource: record }),
      {
        status: 200,
        body: { decision: true },
      },
    );
    const outside = await postJson(evaluation, app, {
      subject: alice,
      action: get,
      resource: r.record("other", "notes", "main", "k"),
    });
    assert.equal(outside.status, 403);
    assert.equal(code(outside.body), "resource_outside_database");
    // The app client's pass for another database is not that database's app token.
    const asOther = await postJson(evaluation, appForOther, {
      subject: alice,
      action: get,
      resource: r.database("other"),
    });
    assert.equal(asOther.status, 403);
    assert.equal(code(asOther.body), "subject_not_caller");
    // Another database's app token asks within its own database only.
    const wrongDb = await postJson(evaluation, otherApp, {
      subject: alice,
      action: get,
      resource: record,
    });
    assert.equal(code(wrongDb.body), "resource_outside_database");
  });

  test("a pass asks only about its own subject, within its own database", async () => {
    const self = { type: "client", id: "agent" };
    assert.deepEqual(
      await postJson(evaluation, agent, { subject: self, action: put, resource: record }),
      {
        status: 200,
        body: { decision: true },
      },
    );
    const other = await postJson(evaluation, agent, {
      subject: alice,
      action: get,
      resource: record,
    });
    assert.equal(other.status, 403);
    assert.equal(code(other.body), "subject_not_caller");
    const wrongType = await postJson(evaluation, agent, {
      subject: { type: "user", id: "agent" },
      action: get,
      resource: record,
    });
    assert.equal(code(wrongType.body), "subject_not_caller");
    const elsewhere = await postJson(evaluation, agentOther, {
      subject: self,
      action: get,
      resource: record,
    });
    assert.equal(code(elsewhere.body), "resource_outside_database");
    // In a batch, one question the caller may not ask refuses the whole request.
    const batch = await postJson(evaluations, agent, {
      action: get,
      resource: record,
      evaluations: [{ subject: self }, { subject: alice }],
    });
    assert.equal(batch.status, 403);
  });

  test("no bearer, a malformed one, a forged or foreign token: 401", async () => {
    const body = { subject: alice, action: get, resource: record };
    const none = await postJson(evaluation, undefined, body);
    assert.equal(none.status, 401);
    assert.equal(code(none.body), "unauthenticated");
    const basic = await fetch(evaluation, {
      method: "POST",
      headers: { authorization: "Basic YTpi", "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assert.equal(basic.status, 401);
    assert.match(basic.headers.get("www-authenticate") ?? "", /^Bearer/);
    const garbage = await postJson(evaluation, "not-a-token", body);
    assert.equal(code(garbage.body), "invalid_token");
    // Same claims, signed by a key that is not ours.
    const { privateKey } = await generateKeyPair("ES256");
    const forged = await new SignJWT({ client_id: "app", skein_subject_type: "client" })
      .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: "x" })
      .setIssuer(idp.issuer)
      .setSubject("app")
      .setAudience("urn:skein:store:shop")
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(privateKey);
    const refused = await postJson(evaluation, forged, body);
    assert.equal(refused.status, 401);
    assert.equal(code(refused.body), "invalid_token");
    // No error message repeats the token.
    assert.ok(!JSON.stringify(refused.body).includes(forged));
    const placement = await fetch(`${idp.issuer}/placement/v1/databases/shop/collections/c`, {
      method: "PUT",
    });
    assert.equal(placement.status, 401);
  });

  test("batch: defaults merged, results in order, the three semantics", async () => {
    const deny = r.record("shop", "notes", "main", "k");
    const items = [{ action: get }, { action: put }, { action: get }, { action: put }];
    const ask = (semantic?: string) =>
      postJson(evaluations, app, {
        subject: alice,
        resource: deny,
        context: { any: { json: [1, "two"] } },
        evaluations: items,
        ...(semantic ? { options: { evaluations_semantic: semantic } } : {}),
      });
    const all = [true, false, true, false].map((decision) => ({ decision }));
    assert.deepEqual((await ask()).body, { evaluations: all });
    assert.deepEqual((await ask("execute_all")).body, { evaluations: all });
    assert.deepEqual((await ask("deny_on_first_deny")).body, {
      evaluations: [{ decision: true }, { decision: false }],
    });
    assert.deepEqual((await ask("permit_on_first_permit")).body, {
      evaluations: [{ decision: true }],
    });
    // An item's own fields override the defaults.
    const override = await postJson(evaluations, app, {
      subject: { type: "user", id: "nobody" },
      action: get,
      evaluations: [{ resource: record }, { subject: alice, resource: record }],
    });
    assert.deepEqual(override.body, { evaluations: [{ decision: false }, { decision: true }] });
    // Without evaluations the batch endpoint answers one evaluation.
    const single = await postJson(evaluations, app, {
      subject: alice,
      action: get,
      resource: record,
    });
    assert.deepEqual(single.body, { decision: true });
  });

  test("batch: 1,000 evaluations answered in one request; 1,001 refused", async () => {
    const keys = Array.from({ length: 1000 }, (_, i) => ({
      resource: r.record("shop", "notes", "main", `key-${i}`),
    }));
    const ok = await postJson(evaluations, app, { subject: alice, action: get, evaluations: keys });
    assert.equal(ok.status, 200);
    const results = ok.body.evaluations as { decision: boolean }[];
    assert.equal(results.length, 1000);
    assert.ok(results.every((e) => e.decision === true));
    const tooMany = await postJson(evaluations, app, {
      subject: alice,
      action: get,
      evaluations: [...keys, keys[0]],
    });
    assert.equal(tooMany.status, 400);
    assert.equal(code(tooMany.body), "invalid_request");
    assert.match(
      (tooMany.body.error as { message: string }).message,
      /evaluations: must have at most 1000/,
    );
  });

  test("bodies decode strictly; properties and context take any JSON", async () => {
    const refusals: [unknown, RegExp][] = [
      [{ subject: alice, action: get }, /^resource: missing required field/],
      [{ subject: alice, action: get, resource: record, extra: 1 }, /^extra: unknown field/],
      [
        { subject: { ...alice, name: "x" }, action: get, resource: record },
        /^subject\.name: unknown field/,
      ],
      [
        { subject: alice, action: { name: "" }, resource: record },
        /^action\.name: must not be empty/,
      ],
      [
        {
          subject: alice,
          action: get,
          resource: { type: "service.record", id: "x", properties: { database: "shop" } },
        },
        /^resource\.properties\.collection: expected string/,
      ],
      [{ subject: alice, action: get, resource: record, context: [] }, /^context: expected object/],
    ];
    for (const [body, message] of refusals) {
      const answer = await postJson(evaluation, app, body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.equal(code(answer.body), "invalid_request");
      assert.match((answer.body.error as { message: string }).message, message);
    }
    const missing = await postJson(evaluations, app, {
      action: get,
      evaluations: [{ resource: record }],
    });
    assert.match(
      (missing.body.error as { message: string }).message,
      /^evaluations\[0\]\.subject: missing/,
    );
    const open = await postJson(evaluation, app, {
      subject: { ...alice, properties: { department: "x", nested: { a: [1, null] } } },
      action: { name: "document.get", properties: { method: "GET" } },
      resource: { ...record, properties: { ...record.properties, owner: "bob" } },
      context: { time: "2026-01-01T00:00:00Z" },
    });
    assert.deepEqual(open.body, { decision: true });
    const text = await fetch(evaluation, {
      method: "POST",
      headers: { authorization: `Bearer ${app}`, "content-type": "text/plain" },
      body: "{}",
    });
    assert.equal(text.status, 415);
    const big = await fetch(evaluation, {
      method: "POST",
      headers: { authorization: `Bearer ${app}`, "content-type": "application/json" },
      body: `{"context":{"pad":"${"x".repeat(4 * 1024 * 1024)}"}}`,
    });
    assert.equal(big.status, 413);
    const duplicate = await fetch(evaluation, {
      method: "POST",
      headers: { authorization: `Bearer ${app}`, "content-type": "application/json" },
      body: '{"subject":{"type":"user","id":"alice","id":"bob"},"action":{"name":"document.get"},"resource":{"type":"service.database","id":"shop"}}',
    });
    assert.equal(duplicate.status, 400);
    assert.equal(
      (await fetch(evaluation, { headers: { authorization: `Bearer ${app}` } })).status,
      405,
    );
  });

  test("placement: the app token places and removes within its database only", async () => {
    const at = (path: string) => `${idp.issuer}/placement/v1/databases/${path}`;
    const call = async (method: string, path: string, token: string | null = app) => {
      const headers: Record<string, string> = {};
      if (token !== null) headers.authorization = `Bearer ${token}`;
      const response = await fetch(at(path), { method, headers });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    await home.grant("user:alice", "read", "db/shop/c/new.c");
    await home.revoke("user:alice", "read", "db/shop");
    const readable = async () =>
      (
        await postJson(evaluation, app, {
          subject: alice,
          action: get,
          resource: r.record("shop", "new.c", "b-1", "k"),
        })
      ).body.decision;
    assert.equal(await readable(), false);
    assert.deepEqual(await call("PUT", "shop/collections/new.c"), {
      status: 200,
      body: { placed: true, created: true },
    });
    assert.deepEqual((await call("PUT", "shop/collections/new.c")).body, {
      placed: true,
      created: false,
    });
    assert.equal(await readable(), false, "the branch is not placed yet");
    assert.deepEqual((await call("PUT", "shop/collections/new.c/branches/b-1")).body, {
      placed: true,
      created: true,
    });
    assert.equal(await readable(), true);
    // Percent-encoded segments decode to the same names.
    assert.deepEqual((await call("PUT", "shop/collections/new%2Ec/branches/b%2D1")).body, {
      placed: true,
      created: false,
    });
    // Removing the collection removes its branches.
    assert.deepEqual((await call("DELETE", "shop/collections/new.c")).body, { removed: true });
    assert.equal(await readable(), false);
    assert.deepEqual((await call("DELETE", "shop/collections/new.c/branches/b-1")).body, {
      removed: false,
    });
    // Failures.
    const cases: [string, string, string | null, number, string][] = [
      ["PUT", "shop/collections/c", null, 401, "unauthenticated"],
      ["PUT", "shop/collections/c", "garbage", 401, "invalid_token"],
      ["PUT", "shop/collections/c", agent, 403, "app_credential_required"],
      ["PUT", "other/collections/c", app, 403, "app_credential_required"],
      ["PUT", "shop/collections/c", appForOther, 403, "app_credential_required"],
      ["PUT", "shop/collections/a%2Fb", app, 400, "invalid_request"],
      ["PUT", `shop/collections/${"c".repeat(129)}`, app, 400, "invalid_request"],
      ["PUT", "sh%20op/collections/c", app, 400, "invalid_request"],
      ["PUT", "shop/collections/c/nope/b", app, 404, "not_found"],
      ["GET", "shop/collections/c", app, 405, "method_not_allowed"],
    ];
    for (const [method, path, token, status, expected] of cases) {
      const answer = await call(method, path, token);
      assert.equal(answer.status, status, `${method} ${path}`);
      assert.equal(code(answer.body), expected, `${method} ${path}`);
    }
  });
});
