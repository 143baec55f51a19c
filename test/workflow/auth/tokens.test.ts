import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { describe, test } from "node:test";
import { SignJWT } from "jose";
import { SkeinError } from "../../../src/common/errors.ts";
import {
  canAccessNamespace,
  createVerifier,
  issueNodeToken,
  issueToken,
} from "../../../src/workflow/auth/tokens.ts";

const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const verify = createVerifier(publicKey);
const now = () => Math.floor(Date.now() / 1000);

describe("bearer tokens", () => {
  test("an issued token verifies to its grants", async () => {
    const token = await issueToken(privateKey, {
      subject: "ci",
      namespaces: ["a", "b"],
      deploy: true,
      ttlSeconds: 60,
    });
    const p = await verify(token);
    assert.equal(p.subject, "ci");
    assert.deepEqual(p.namespaces, new Set(["a", "b"]));
    assert.equal(p.deploy, true);
    assert.equal(p.worker, false);
    assert.ok(p.expiresAt > now() && p.expiresAt <= now() + 60);
    assert.equal(canAccessNamespace(p, "a"), true);
    assert.equal(canAccessNamespace(p, "c"), false);
  });

  test('"*" grants every namespace', async () => {
    const p = await verify(
      await issueToken(privateKey, { subject: "root", namespaces: "*", ttlSeconds: 60 }),
    );
    assert.equal(p.namespaces, "*");
    assert.equal(canAccessNamespace(p, "anything"), true);
  });

  test("a node credential names its node and grants nothing; an issued token names no node", async () => {
    const node = await verify(await issueNodeToken(privateKey, "n1", 60));
    assert.deepEqual(
      [node.node, node.subject, node.namespaces, node.deploy, node.worker],
      ["n1", "node:n1", new Set(), false, false],
    );
    const all = await verify(
      await issueToken(privateKey, {
        subject: "node:n1",
        namespaces: "*",
        deploy: true,
        worker: true,
        ttlSeconds: 60,
      }),
    );
    assert.equal(all.node, undefined);
  });

  const sign = (claims: Record<string, unknown>, header: Record<string, string> = {}) =>
    new SignJWT(claims).setProtectedHeader({ alg: "EdDSA", ...header }).sign(privateKey);
  const refusals: [label: string, token: () => Promise<string>][] = [
    ["garbage", async () => "abc"],
    [
      "another key's token",
      async () =>
        issueToken(generateKeyPairSync("ed25519").privateKey, {
          subject: "x",
          namespaces: "*",
          ttlSeconds: 60,
        }),
    ],
    ["expired", () => sign({ iss: "skein", sub: "x", ns: "*", exp: now() - 100 })],
    ["no exp", () => sign({ iss: "skein", sub: "x", ns: "*" })],
    ["no sub", () => sign({ iss: "skein", ns: "*", exp: now() + 60 })],
    ["wrong issuer", () => sign({ iss: "other", sub: "x", ns: "*", exp: now() + 60 })],
    ["ns not a list or *", () => sign({ iss: "skein", sub: "x", ns: "a", exp: now() + 60 })],
    [
      "unknown claim",
      () => sign({ iss: "skein", sub: "x", ns: "*", exp: now() + 60, admin: true }),
    ],
    [
      "deploy not a boolean",
      () => sign({ iss: "skein", sub: "x", ns: "*", exp: now() + 60, deploy: "yes" }),
    ],
    [
      "tampered payload",
      async () => {
        const [h, , s] = (
          await issueToken(privateKey, { subject: "x", namespaces: ["a"], ttlSeconds: 60 })
        ).split(".");
        const payload = Buffer.from(
          JSON.stringify({ iss: "skein", sub: "x", ns: "*", exp: now() + 60 }),
        ).toString("base64url");
        return `${h}.${payload}.${s}`;
      },
    ],
  ];
  for (const [label, token] of refusals) {
    test(`refuses ${label}: unauthenticated (401)`, async () => {
      await assert.rejects(verify(await token()), (error: unknown) => {
        assert.ok(error instanceof SkeinError);
        assert.equal(error.code, "unauthenticated");
        assert.equal(error.status, 401);
        return true;
      });
    });
  }
});
