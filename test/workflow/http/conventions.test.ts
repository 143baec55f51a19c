import assert from "node:assert/strict";
import { createPrivateKey, generateKeyPairSync } from "node:crypto";
import { describe, test } from "node:test";
import { SignJWT } from "jose";
import { issueToken } from "../../../src/workflow/auth/tokens.ts";
import { call, serveForSuite, tokenFor } from "../support/server.ts";

describe("HTTP conventions: auth, body parsing, error bodies (real skein serve)", () => {
  const s = serveForSuite("[http]\nmax_body_bytes = 1024");

  test("GET /health needs no token", async () => {
    const r = await call(s.server.url, "GET", "/health");
    assert.deepEqual([r.status, r.body], [200, { status: "ok" }]);
  });

  const foreignKey = generateKeyPairSync("ed25519").privateKey;
  const now = () => Math.floor(Date.now() / 1000);
  const bad: [label: string, header: () => Promise<string | undefined>][] = [
    ["no authorization header", async () => undefined],
    ["not a Bearer scheme", async () => `Basic ${Buffer.from("a:b").toString("base64")}`],
    ["Bearer without a token", async () => "Bearer "],
    ["garbage token", async () => "Bearer not.a.jwt"],
    [
      "token signed by another key",
      async () =>
        `Bearer ${await issueToken(foreignKey, { subject: "x", namespaces: "*", ttlSeconds: 60 })}`,
    ],
    [
      "expired token",
      async () => {
        const key = createPrivateKey(await keyPem());
        const jwt = await new SignJWT({ ns: "*" })
          .setProtectedHeader({ alg: "EdDSA" })
          .setIssuer("skein")
          .setSubject("late")
          .setExpirationTime(now() - 120)
          .sign(key);
        return `Bearer ${jwt}`;
      },
    ],
    [
      "token with claims of the wrong type",
      async () => {
        const key = createPrivateKey(await keyPem());
        const jwt = await new SignJWT({ ns: "default" })
          .setProtectedHeader({ alg: "EdDSA" })
          .setIssuer("skein")
          .setSubject("odd")
          .setExpirationTime(now() + 60)
          .sign(key);
        return `Bearer ${jwt}`;
      },
    ],
  ];
  async function keyPem(): Promise<string> {
    const { readFile } = await import("node:fs/promises");
    const { join } = await import("node:path");
    return readFile(join(s.dir.path, "data", "signing-key.pem"), "utf8");
  }

  const routes: [method: string, path: string][] = [
    ["GET", "/namespaces"],
    ["GET", "/namespaces/records"],
    ["POST", "/namespaces"],
  ];
  for (const [label, header] of bad) {
    for (const [method, path] of routes) {
      test(`${method} ${path} with ${label}: 401 unauthenticated`, async () => {
        const h = await header();
        const r = await call(s.server.url, method, path, {
          ...(h === undefined ? {} : { headers: { authorization: h } }),
          ...(method === "POST" ? { body: { name: "x" } } : {}),
        });
        assert.equal(r.status, 401);
        assert.equal(r.body.error.code, "unauthenticated");
      });
    }
  }

  test("a valid bearer lacking the grant is 403, not 401", async () => {
    const token = await tokenFor(s.dir.path, { namespaces: ["mine"] });
    const r = await call(s.server.url, "POST", "/namespaces", { token, body: { name: "theirs" } });
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, "forbidden");
  });

  const bodies: [
    label: string,
    body: string,
    headers: Record<string, string>,
    status: number,
    code: string,
  ][] = [
    ["malformed JSON", '{"name":', {}, 400, "malformed_json"],
    ["trailing garbage", '{"name":"a"} x', {}, 400, "malformed_json"],
    ["duplicate keys", '{"name":"a","name":"b"}', {}, 400, "malformed_json"],
    ["empty JSON body", "", { "content-type": "application/json" }, 400, "malformed_json"],
    [
      "body over http.max_body_bytes",
      JSON.stringify({ name: "x".repeat(2000) }),
      {},
      413,
      "body_too_large",
    ],
    ["text/plain body", "name=x", { "content-type": "text/plain" }, 415, "unsupported_media_type"],
  ];
  for (const [label, body, headers, status, code] of bodies) {
    test(`POST /namespaces with ${label}: ${status} ${code}`, async () => {
      const r = await call(s.server.url, "POST", "/namespaces", { token: s.admin, body, headers });
      assert.equal(r.status, status);
      assert.equal(r.body.error.code, code);
      assert.equal(typeof r.body.error.message, "string");
    });
  }

  test("an unknown route without a bearer is 401: routes are not revealed to strangers", async () => {
    const r = await call(s.server.url, "GET", "/nowhere");
    assert.equal(r.status, 401);
    assert.equal(r.body.error.code, "unauthenticated");
  });

  test("HEAD /health needs no token either", async () => {
    const response = await fetch(`${s.server.url}/health`, { method: "HEAD" });
    assert.equal(response.status, 200);
  });

  test("an unknown route is 404 route_not_found with the error body", async () => {
    const r = await call(s.server.url, "GET", "/nowhere", { token: s.admin });
    assert.equal(r.status, 404);
    assert.equal(r.body.error.code, "route_not_found");
  });
});
