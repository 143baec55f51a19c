import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { STORE_REFUSALS } from "../../src/store/errors.ts";

test("every store refusal code is documented in docs/store-protocol.md", () => {
  const doc = readFileSync(new URL("../../docs/store-protocol.md", import.meta.url), "utf8");
  for (const code of Object.keys(STORE_REFUSALS)) {
    assert.match(
      doc,
      new RegExp(`\\|\\s*\`${code}\`\\s*\\|`),
      `${code} is not in the refusal table`,
    );
  }
});

test("the spec's store run-time refusals this engine raises are in the catalogue", () => {
  for (const code of ["page_limit", "changes_node_budget", "append_prune_keep_limit"]) {
    assert.ok(Object.hasOwn(STORE_REFUSALS, code), code);
  }
});
