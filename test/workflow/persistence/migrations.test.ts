// The two backends apply the one schema list (sql/schema.ts): the same versions in the same
// order, with the same names, numbered 1.., so a schema version means the same thing on
// SQLite and on PostgreSQL.

import assert from "node:assert/strict";
import { test } from "node:test";
import { MIGRATIONS as POSTGRES } from "../../../src/workflow/persistence/postgres/migrations.ts";
import { MIGRATIONS as SQLITE } from "../../../src/workflow/persistence/sqlite/migrations.ts";

test("SQLite and PostgreSQL migrate through the same versions, with the same names", () => {
  const list = (ms: typeof SQLITE) => ms.map((m) => `${m.version} ${m.name}`);
  assert.deepEqual(list(POSTGRES), list(SQLITE));
  assert.deepEqual(
    SQLITE.map((m) => m.version),
    SQLITE.map((_, i) => i + 1),
  );
});
