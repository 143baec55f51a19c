/** Every code of skein-idp's refusal catalogue is documented in docs/identity.md. */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { IDP_REFUSALS } from "../../src/idp/errors.ts";

test("docs/identity.md names every skein-idp refusal code", () => {
  const docs = readFileSync(new URL("../../docs/identity.md", import.meta.url), "utf8");
  for (const code of Object.keys(IDP_REFUSALS)) {
    assert.ok(docs.includes(`\`${code}\``), `${code} is not documented`);
  }
});
