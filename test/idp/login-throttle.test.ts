/**
 * The login page's throttle (#30 item 5), on a real skein-idp process: failed sign-ins are
 * bounded per network source over every name (a password sprayed across names), not only
 * per name; another source is not affected. Unknown names cost no password hash, yet are
 * answered like a wrong password.
 */

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { LOGIN_FAILURES_PER_SOURCE_PER_MINUTE } from "../../src/idp/bounds.ts";
import { PasswordCheck } from "../../src/idp/oidc/password-check.ts";
import { sourceOf } from "../../src/idp/oidc/throttle.ts";
import { hashSecret, verifySecret } from "../../src/idp/secrets.ts";
import { idpHome, startIdp } from "./fixture.ts";
import { beginLogin, submitFrom } from "./login-flow.ts";

describe("skein-idp sign-in throttle (real process)", async () => {
  const home = await idpHome();
  await home.client("web", "--redirect", "http://127.0.0.1:9/callback");
  await home.user("alice", "correct horse battery");
  const idp = await startIdp(home.dataDir);

  test("one source is refused after its failures over many names; another still signs in", async () => {
    const flow = await beginLogin(idp.issuer, "web");
    // One password tried across names (unknown ones and alice), each name failing once.
    for (let i = 0; i < LOGIN_FAILURES_PER_SOURCE_PER_MINUTE; i++) {
      const name = i === 0 ? "alice" : `spray-${i}`;
      const failed = await submitFrom(flow, name, "Summer2024!", "127.0.0.1");
      assert.equal(failed.status, 401, `attempt ${i}`);
    }
    // The source's bound is reached: even alice's right password is refused from it.
    const blocked = await submitFrom(flow, "alice", "correct horse battery", "127.0.0.1");
    assert.equal(blocked.status, 429);
    assert.match(blocked.text, /Too many failed sign-ins/);
    // alice herself, from another address, is not locked out by that source.
    const elsewhere = await beginLogin(idp.issuer, "web");
    const signedIn = await submitFrom(elsewhere, "alice", "correct horse battery", "127.0.0.2");
    assert.equal(signedIn.status, 303);
    assert.match(idp.log(), /"source":"127\.0\.0\.1"[^\n]*sign-in throttled/);
  });

  test("an unknown name is answered like a wrong password", async () => {
    const flow = await beginLogin(idp.issuer, "web");
    const unknown = await submitFrom(flow, "nobody-here", "some password", "127.0.0.3");
    const wrong = await submitFrom(flow, "alice", "some password", "127.0.0.3");
    assert.equal(unknown.status, 401);
    assert.equal(wrong.status, 401);
    const notice = (text: string) => /<p role="alert">([^<]*)<\/p>/.exec(text)?.[1];
    assert.equal(notice(unknown.text), "Wrong name or password.");
    assert.equal(notice(unknown.text), notice(wrong.text));
  });
});

test("unknown names are checked without a password hash; known ones with one each", async () => {
  const stored = new Map([["alice", await hashSecret("correct horse battery")]]);
  let verifications = 0;
  const check = new PasswordCheck(
    (name) => stored.get(name),
    (password, hash) => {
      verifications++;
      return verifySecret(password, hash);
    },
  );
  const unknown = await Promise.all(
    Array.from({ length: 50 }, (_, i) => check.check(`invented-${i}`, "guess")),
  );
  assert.deepEqual(new Set(unknown), new Set(["unknown_name"]));
  assert.equal(verifications, 0, "no hash for an unknown name");
  assert.equal(await check.check("alice", "guess"), "wrong_password");
  assert.equal(await check.check("alice", "correct horse battery"), "ok");
  assert.equal(verifications, 2);
});

test("sources: IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64", () => {
  assert.equal(sourceOf("127.0.0.1"), "127.0.0.1");
  assert.equal(sourceOf("::ffff:10.1.2.3"), "10.1.2.3");
  assert.equal(sourceOf("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
  assert.equal(sourceOf("2001:DB8:1:2:bbbb:cccc:dddd:eeee"), "2001:db8:1:2::/64");
  assert.equal(sourceOf("2001:db8::1"), "2001:db8:0:0::/64");
  assert.equal(sourceOf("::1"), "0:0:0:0::/64");
  assert.equal(sourceOf("fe80::1%eth0"), "fe80:0:0:0::/64");
  assert.equal(sourceOf(undefined), "unknown");
});
