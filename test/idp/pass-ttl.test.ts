// `skein-idp serve --pass-ttl SECONDS`: passes (client credentials here) live that long, so
// tests and rehearsals can watch a pass expire and be renewed; out-of-range values are usage
// errors.

import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeJwt } from "jose";
import { UsageError } from "../../src/common/cli.ts";
import { parsePassTtl } from "../../src/idp/cli/serve.ts";
import { addClient, clientPass, DATABASE, runIdp } from "../store/idp/support.ts";

test("a pass lives --pass-ttl seconds", async () => {
  const idp = await runIdp(["--pass-ttl", "7"]);
  const pass = await clientPass(idp.issuer, "c1", addClient(idp, "c1"), DATABASE);
  const claims = decodeJwt(pass);
  assert.equal(claims.exp! - claims.iat!, 7);
});

test("--pass-ttl is 1..86400 seconds", () => {
  assert.equal(parsePassTtl("1"), 1);
  assert.equal(parsePassTtl("86400"), 86_400);
  for (const bad of ["0", "86401", "-1", "1.5", "", "ten"]) {
    assert.throws(() => parsePassTtl(bad), UsageError, bad);
  }
});
