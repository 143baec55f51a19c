/**
 * The OAuth side of a real skein-idp process: discovery and JWKS, client credentials giving
 * a JWT store pass that verifies against the JWKS with the contract's claims, authorization
 * code with PKCE through the login page (driven with fetch: authorize, the form, the
 * redirects, the code exchange), the login throttle, a restart that keeps users, clients,
 * grants and keys, and a captured log in which no secret, password or token ever appears.
 */

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import {
  accessToken,
  basic,
  clientToken,
  idpHome,
  postJson,
  resources,
  startIdp,
} from "./fixture.ts";
import { beginLogin, REDIRECT, submit } from "./login-flow.ts";

describe("skein-idp OAuth and OIDC (real process, real HTTP)", async () => {
  const home = await idpHome();
  const appSecret = await home.client("app", "--app", "shop");
  const webSecret = await home.client("web", "--redirect", REDIRECT);
  await home.user("alice", "correct horse battery");
  await home.grant("user:alice", "read", "db/shop");
  let idp = await startIdp(home.dataDir);
  const secrets = [appSecret, webSecret, "correct horse battery", "wrong password 1"];

  test("discovery names the endpoints, and the JWKS holds the public signing key", async () => {
    const discovery = (await (
      await fetch(`${idp.issuer}/.well-known/openid-configuration`)
    ).json()) as Record<string, unknown>;
    assert.equal(discovery.issuer, idp.issuer);
    assert.equal(discovery.jwks_uri, `${idp.issuer}/jwks`);
    assert.equal(discovery.token_endpoint, `${idp.issuer}/token`);
    assert.equal(discovery.authorization_endpoint, `${idp.issuer}/auth`);
    assert.deepEqual(discovery.code_challenge_methods_supported, ["S256"]);
    assert.ok((discovery.grant_types_supported as string[]).includes("client_credentials"));
    const jwks = (await (await fetch(discovery.jwks_uri as string)).json()) as {
      keys: Record<string, unknown>[];
    };
    assert.equal(jwks.keys.length, 1);
    assert.equal(jwks.keys[0]!.kty, "EC");
    assert.equal(jwks.keys[0]!.d, undefined, "no private part in the JWKS");
    const authzen = (await (
      await fetch(`${idp.issuer}/.well-known/authzen-configuration`)
    ).json()) as Record<string, unknown>;
    assert.deepEqual(authzen, {
      policy_decision_point: idp.issuer,
      access_evaluation_endpoint: `${idp.issuer}/access/v1/evaluation`,
      access_evaluations_endpoint: `${idp.issuer}/access/v1/evaluations`,
    });
  });

  test("client credentials give a JWT store pass that verifies against the JWKS", async () => {
    const { status, body } = await clientToken(idp.issuer, "app", appSecret, "shop", {
      scope: "store",
    });
    assert.equal(status, 200);
    assert.equal(body.token_type, "Bearer");
    const token = body.access_token as string;
    const header = decodeProtectedHeader(token);
    assert.equal(header.typ, "at+jwt");
    assert.equal(header.alg, "ES256");
    assert.equal(typeof header.kid, "string");
    const jwks = createRemoteJWKSet(new URL(`${idp.issuer}/jwks`));
    const { payload } = await jwtVerify(token, jwks, {
      issuer: idp.issuer,
      audience: "urn:skein:store:shop",
    });
    assert.equal(payload.sub, "app");
    assert.equal(payload.client_id, "app");
    assert.equal(payload.skein_subject_type, "client");
    assert.equal(payload.scope, "store");
    assert.ok(payload.exp! > payload.iat!);
    // client_secret_post works too; a wrong secret, an unknown client or a resource that is
    // not a store database is refused.
    const post = await fetch(`${idp.issuer}/token`, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "client_credentials",
        resource: "urn:skein:store:shop",
        client_id: "app",
        client_secret: appSecret,
      }),
    });
    assert.equal(post.status, 200);
    const wrong = await clientToken(idp.issuer, "app", "wrong-secret", "shop");
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error, "invalid_client");
    assert.equal((await clientToken(idp.issuer, "ghost", "x", "shop")).status, 401);
    const foreign = await fetch(`${idp.issuer}/token`, {
      method: "POST",
      headers: { authorization: basic("app", appSecret) },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        resource: "https://elsewhere.example/",
      }),
    });
    assert.equal(foreign.status, 400);
    assert.equal(((await foreign.json()) as { error: string }).error, "invalid_target");
  });

  test("authorization code with PKCE through the login page gives the user's pass", async () => {
    const flow = await beginLogin(idp.issuer, "web");
    assert.match(flow.page, /<form method="post" action="\/interaction\/[^"]+\/login">/);
    assert.match(flow.page, /to continue to <b>web<\/b>/);
    // Browsers apply form-action to the redirects after the form's POST: the last hop goes to
    // the client's registered redirect, so its origin must be allowed (a real browser stops
    // there otherwise).
    assert.equal(flow.csp, `default-src 'none'; form-action 'self' ${new URL(REDIRECT).origin}`);
    const wrong = await submit(idp.issuer, flow, "alice", "wrong password 1");
    assert.equal(wrong.status, 401);
    assert.match(await wrong.text(), /Wrong name or password/);
    const done = await submit(idp.issuer, flow, "alice", "correct horse battery");
    assert.equal(done.status, 303);
    const callback = new URL(done.headers.get("location")!);
    assert.equal(callback.origin + callback.pathname, REDIRECT);
    assert.equal(callback.searchParams.get("state"), "s-123");
    assert.equal(callback.searchParams.get("iss"), idp.issuer);
    const code = callback.searchParams.get("code")!;
    const exchange = async (verifier: string) =>
      fetch(`${idp.issuer}/token`, {
        method: "POST",
        headers: { authorization: basic("web", webSecret) },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
          resource: "urn:skein:store:shop",
        }),
      });
    // A wrong verifier is refused (PKCE)...
    const bad = await exchange(randomBytes(32).toString("base64url"));
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: string }).error, "invalid_grant");
    // ... and the refused attempt consumed nothing but itself: a fresh login gives a code
    // the right verifier exchanges.
    const again = await beginLogin(idp.issuer, "web");
    const ok = await submit(idp.issuer, again, "alice", "correct horse battery");
    const code2 = new URL(ok.headers.get("location")!).searchParams.get("code")!;
    const tokens = await fetch(`${idp.issuer}/token`, {
      method: "POST",
      headers: { authorization: basic("web", webSecret) },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: code2,
        redirect_uri: REDIRECT,
        code_verifier: again.verifier,
        resource: "urn:skein:store:shop",
      }),
    });
    assert.equal(tokens.status, 200);
    const body = (await tokens.json()) as { access_token: string; id_token: string };
    const jwks = createRemoteJWKSet(new URL(`${idp.issuer}/jwks`));
    const { payload } = await jwtVerify(body.access_token, jwks, {
      issuer: idp.issuer,
      audience: "urn:skein:store:shop",
      typ: "at+jwt",
    });
    assert.equal(payload.sub, "alice");
    assert.equal(payload.client_id, "web");
    assert.equal(payload.skein_subject_type, "user");
    // The user's pass may ask about the user itself.
    const self = await postJson(`${idp.issuer}/access/v1/evaluation`, body.access_token, {
      subject: { type: "user", id: "alice" },
      action: { name: "document.get" },
      resource: resources.record("shop", "notes", "main", "k"),
    });
    assert.deepEqual(self, { status: 200, body: { decision: true } });
    const other = await postJson(`${idp.issuer}/access/v1/evaluation`, body.access_token, {
      subject: { type: "user", id: "bob" },
      action: { name: "document.get" },
      resource: resources.record("shop", "notes", "main", "k"),
    });
    assert.equal(other.status, 403);
    // An ID token is not a pass.
    const idToken = await postJson(`${idp.issuer}/access/v1/evaluation`, body.id_token, {
      subject: { type: "user", id: "alice" },
      action: { name: "document.get" },
      resource: resources.database("shop"),
    });
    assert.equal(idToken.status, 401);
    assert.equal((idToken.body.error as { code: string }).code, "invalid_token");
  });

  test("a login page without its interaction cookie is refused, not a failure", async () => {
    const response = await fetch(`${idp.issuer}/interaction/not-a-uid`);
    assert.equal(response.status, 400);
    const body = (await response.json()) as { error: { code: string } };
    assert.equal(body.error.code, "invalid_request");
    assert.ok(!idp.log().includes("request failed"));
  });

  test("authorization requests without PKCE are refused", async () => {
    const url = new URL(`${idp.issuer}/auth`);
    url.search = new URLSearchParams({
      client_id: "web",
      response_type: "code",
      redirect_uri: REDIRECT,
      scope: "openid",
    }).toString();
    const response = await fetch(url, { redirect: "manual" });
    const location = new URL(response.headers.get("location")!);
    assert.equal(location.searchParams.get("error"), "invalid_request");
    assert.match(location.searchParams.get("error_description") ?? "", /PKCE/);
  });

  test("failed sign-ins for one name are throttled after ten a minute", async () => {
    await home.user("mallory", "mallory-password");
    const flow = await beginLogin(idp.issuer, "web");
    for (let i = 0; i < 10; i++) {
      assert.equal((await submit(idp.issuer, flow, "mallory", `guess-${i}`)).status, 401);
    }
    const blocked = await submit(idp.issuer, flow, "mallory", "mallory-password");
    assert.equal(blocked.status, 429);
    assert.match(await blocked.text(), /Too many failed sign-ins/);
  });

  test("a restart keeps users, clients, grants and keys", async () => {
    const before = await accessToken(idp.issuer, "app", appSecret, "shop");
    const issuer = idp.issuer;
    const log = idp.log();
    await idp.stop();
    idp = await startIdp(home.dataDir, `127.0.0.1:${idp.port}`);
    assert.equal(idp.issuer, issuer);
    // The token issued before the restart still verifies and is still accepted.
    const jwks = createRemoteJWKSet(new URL(`${idp.issuer}/jwks`));
    await jwtVerify(before, jwks, { issuer, audience: "urn:skein:store:shop" });
    const asked = await postJson(`${idp.issuer}/access/v1/evaluation`, before, {
      subject: { type: "user", id: "alice" },
      action: { name: "store.stats" },
      resource: resources.database("shop"),
    });
    assert.deepEqual(asked, { status: 200, body: { decision: true } });
    // The client's secret still works; the user still signs in.
    await accessToken(idp.issuer, "app", appSecret, "shop");
    const flow = await beginLogin(idp.issuer, "web");
    const done = await submit(idp.issuer, flow, "alice", "correct horse battery");
    assert.equal(done.status, 303);
    assert.ok(new URL(done.headers.get("location")!).searchParams.has("code"));
    secrets.push(before);
    checkLog(log + idp.log(), secrets);
  });
});

/** No secret, password or token in the log; the log did record the events. */
function checkLog(log: string, secrets: readonly string[]): void {
  assert.match(log, /"msg":"sign-in failed"/);
  assert.match(log, /"msg":"signed in"/);
  assert.match(log, /"error":"invalid_client"/);
  for (const secret of secrets) {
    assert.ok(!log.includes(secret), "a secret, password or token reached the log");
  }
}
