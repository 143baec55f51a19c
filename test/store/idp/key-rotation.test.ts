// The store follows a signing-key rotation at the real `skein-idp`: the IdP is stopped, its
// keys.json replaced by a new key (a new kid), and started again on the same address. A
// pass naming the new kid makes the store fetch the issuer's key set again (one request),
// and a pass signed with the withdrawn key no longer verifies once the set is fresh.

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { decodeProtectedHeader, exportJWK, generateKeyPair } from "jose";
import { SkeinError } from "../../../src/common/errors.ts";
import { SIGNING_ALG } from "../../../src/idp/data-dir.ts";
import { agent, clientPass, DATABASE, idpStore, runIdp } from "./support.ts";

/** Replaces the IdP's signing key with a new one; the new kid. */
async function rotateKey(dataDir: string): Promise<string> {
  const file = join(dataDir, "keys.json");
  const keys = JSON.parse(readFileSync(file, "utf8")) as { signing: unknown[] };
  const { privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const kid = `rotated-${Date.now().toString(36)}`;
  const signing = [{ ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG, use: "sig" }];
  writeFileSync(file, `${JSON.stringify({ ...keys, signing })}\n`, { mode: 0o600 });
  return kid;
}

test("a pass naming an unknown kid makes the store fetch the rotated key set", async () => {
  const idp = await runIdp();
  // The refresh cooldown (30 s in production) is the seam's 0 here, so the test need not
  // wait it out; the fetch-on-unknown-kid path is the production one.
  const served = await idpStore(idp, { jwksCooldownMs: 0 });
  const reader = await agent(idp, "reader-rot", [["read", `db/${DATABASE}`]]);
  const oldKid = decodeProtectedHeader(reader.pass).kid;
  await served.connect(reader.pass);

  await idp.stop();
  const newKid = await rotateKey(idp.dataDir);
  await idp.start();
  const rotated = await clientPass(idp.issuer, "reader-rot", reader.secret, DATABASE);
  assert.equal(decodeProtectedHeader(rotated).kid, newKid);
  assert.notEqual(newKid, oldKid);

  const before = served.gate.requestsSent;
  const client = await served.connect(rotated);
  // hello asks the IdP nothing but the key set: exactly one fetch, for the unknown kid.
  assert.equal(served.gate.requestsSent - before, 1);
  await client.call("store.stats", {});

  // The old key is gone from the fresh set: its pass is refused, not served from a cache.
  try {
    await served.connect(reader.pass);
    assert.fail("a pass signed with the withdrawn key was accepted");
  } catch (error) {
    assert.ok(error instanceof SkeinError, String(error));
    assert.equal(error.code, "pass_invalid");
  }
});
