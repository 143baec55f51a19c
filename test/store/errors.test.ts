import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CONFIG_REFUSALS,
  STARTUP_REFUSALS,
  STORE_REFUSALS,
  startupRefusal,
  storeError,
} from "../../src/store/errors.ts";
import { documentedCodes } from "../support/doc-tables.ts";

test("every store refusal code is documented in docs/store-protocol.md", () => {
  const documented = documentedCodes("docs/store-protocol.md", "## Refusal codes");
  for (const code of Object.keys(STORE_REFUSALS)) {
    assert.ok(documented.includes(code), `${code} is not in the refusal table`);
  }
});

test("the spec's store run-time refusals this engine raises are in the catalogue", () => {
  for (const code of ["page_limit", "changes_node_budget", "append_prune_keep_limit"]) {
    assert.ok(Object.hasOwn(STORE_REFUSALS, code), code);
  }
});

test("every code of the refusal table in docs/store-protocol.md is in the catalogue", () => {
  for (const code of documentedCodes("docs/store-protocol.md", "## Refusal codes")) {
    assert.ok(Object.hasOwn(STORE_REFUSALS, code), `${code} is documented but not declared`);
  }
});

test("start-up refusals and their doc table in docs/store-config.md agree both ways", () => {
  const documented = documentedCodes("docs/store-config.md", "### Start-up refusal codes");
  assert.deepEqual([...documented].sort(), Object.keys(STARTUP_REFUSALS).sort());
});

test("configuration refusals are in docs/store-config.md, and every code there is declared", () => {
  const documented = documentedCodes("docs/store-config.md", "## Refusals");
  for (const code of Object.keys(CONFIG_REFUSALS)) assert.ok(documented.includes(code), code);
  for (const code of documented) {
    assert.ok(Object.hasOwn(CONFIG_REFUSALS, code) || Object.hasOwn(STARTUP_REFUSALS, code), code);
  }
});

test("the constructors carry their code", () => {
  assert.equal(storeError("page_limit").code, "page_limit");
  const refusal = startupRefusal("invalid_socket", "socket", "not private");
  assert.deepEqual([refusal.code, refusal.message], ["invalid_socket", "socket: not private"]);
});
