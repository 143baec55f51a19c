// The cache of verified bearer tokens in front of the real Ed25519 verifier: a token is
// checked once, then served from the cache until it expires; refused tokens are never
// kept; the cache holds at most `max` tokens.

import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { describe, test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import { createVerifier, issueToken } from "../../../src/workflow/auth/tokens.ts";
import { cachingVerifier } from "../../../src/workflow/auth/verified-tokens.ts";

const { privateKey, publicKey } = generateKeyPairSync("ed25519");

/** The real verifier, counting the tokens it was asked to check. */
function counted(options: { now?: () => number } = {}) {
  const real = createVerifier(publicKey, options);
  const checked: string[] = [];
  return {
    checked,
    verify: (token: string) => {
      checked.push(token);
      return real(token);
    },
  };
}

const token = (subject: string, ttlSeconds = 60) =>
  issueToken(privateKey, { subject, namespaces: ["a"], ttlSeconds });

const unauthenticated = (error: unknown) =>
  error instanceof SkeinError && error.code === "unauthenticated";

describe("verified tokens", () => {
  test("a token is verified once, then answered from the cache with the same grants", async () => {
    const real = counted();
    const verify = cachingVerifier(real.verify, { max: 8 });
    const t = await token("ci");
    const first = await verify(t);
    const second = await verify(t);
    assert.equal(second, first);
    assert.equal(second.subject, "ci");
    assert.deepEqual(real.checked, [t]);
  });

  test("`known` answers at once only for a verified token still within its exp", async () => {
    let clock = Date.now();
    const real = counted({ now: () => clock });
    const verify = cachingVerifier(real.verify, { max: 8, now: () => clock });
    const t = await token("hook", 3);
    assert.equal(verify.known?.(t), undefined, "not verified yet");
    const principal = await verify(t);
    assert.equal(verify.known?.(t), principal);
    const forged = `${t.slice(0, -4)}AAAA`;
    await assert.rejects(verify(forged), unauthenticated);
    assert.equal(verify.known?.(forged), undefined, "a refused token is never known");
    clock += 4_000;
    assert.equal(verify.known?.(t), undefined, "past its exp it must be verified again");
    assert.deepEqual(real.checked, [t, forged]);
  });

  test("a refused token is checked again every time (never kept)", async () => {
    const real = counted();
    const verify = cachingVerifier(real.verify, { max: 8 });
    const forged = `${(await token("ci")).slice(0, -4)}AAAA`;
    await assert.rejects(verify(forged), unauthenticated);
    await assert.rejects(verify(forged), unauthenticated);
    assert.equal(real.checked.length, 2);
  });

  test("a cached token past its exp is verified again, and refused", async () => {
    // One clock for the cache and the verifier, moved by the test: no real wait, and no
    // loaded machine can let the token expire before its first verify.
    let clock = Date.now();
    const real = counted({ now: () => clock });
    const verify = cachingVerifier(real.verify, { max: 8, now: () => clock });
    const t = await token("brief", 3);
    await verify(t);
    clock += 4_000;
    await assert.rejects(verify(t), unauthenticated);
    assert.deepEqual(real.checked, [t, t]);
  });

  test("expiry follows the clock the cache is given", async () => {
    const real = counted();
    let clock = Date.now();
    const verify = cachingVerifier(real.verify, { max: 8, now: () => clock });
    const t = await token("ci", 60);
    await verify(t);
    clock += 30_000;
    await verify(t);
    assert.equal(real.checked.length, 1, "within its lifetime: from the cache");
    clock += 31_000;
    await verify(t);
    assert.equal(real.checked.length, 2, "past exp by the cache's clock: verified again");
  });

  test("at most max tokens are held; the least recently used leaves first", async () => {
    const real = counted();
    const verify = cachingVerifier(real.verify, { max: 2 });
    const [a, b, c] = await Promise.all([token("a"), token("b"), token("c")]);
    await verify(a);
    await verify(b);
    await verify(a); // a is now the most recently used
    await verify(c); // b leaves
    assert.deepEqual(real.checked, [a, b, c]);
    await verify(a);
    await verify(c);
    assert.deepEqual(real.checked, [a, b, c], "a and c are held");
    await verify(b);
    assert.deepEqual(real.checked, [a, b, c, b], "b was not");
  });

  test("a token used again and again stays the most recently used", async () => {
    const real = counted();
    const verify = cachingVerifier(real.verify, { max: 2 });
    const [a, b, c] = await Promise.all([token("a"), token("b"), token("c")]);
    await verify(a);
    await verify(b);
    await verify(b);
    await verify(a);
    await verify(a); // a is the most recently used, twice over
    await verify(c); // so b leaves
    await verify(a);
    assert.deepEqual(real.checked, [a, b, c]);
    await verify(b);
    assert.deepEqual(real.checked, [a, b, c, b]);
  });

  test("an expired most recent token is verified again and not kept", async () => {
    let clock = Date.now();
    const real = counted({ now: () => clock });
    const verify = cachingVerifier(real.verify, { max: 2, now: () => clock });
    const short = await token("a", 1);
    await verify(short);
    clock += 2_000;
    await assert.rejects(verify(short), unauthenticated);
    await assert.rejects(verify(short), unauthenticated);
    assert.deepEqual(real.checked, [short, short, short]);
  });
});
