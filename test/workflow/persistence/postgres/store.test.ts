import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { SkeinError } from "../../../../src/common/errors.ts";
import {
  LATEST_SCHEMA_VERSION,
  MIGRATIONS,
} from "../../../../src/workflow/persistence/postgres/migrations.ts";
import { PostgresWorkflowStore } from "../../../../src/workflow/persistence/postgres/store.ts";
import { POSTGRES_URL, postgresRequired } from "../../../support/postgres.ts";
import { workflowStoreConformance } from "../conformance.ts";

const URL = POSTGRES_URL;

// Each test gets its own schema, dropped at the end, so runs never see each other's rows.
const schemas: string[] = [];
async function fresh(): Promise<string> {
  const schema = `skein_test_${randomBytes(6).toString("hex")}`;
  schemas.push(schema);
  return schema;
}

const skip = await postgresRequired();

describe("PostgreSQL workflow store", { skip }, () => {
  let admin: pg.Client;
  before(async () => {
    admin = new pg.Client({ connectionString: URL });
    await admin.connect();
  });
  after(async () => {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });

  workflowStoreConformance("PostgreSQL", {
    fresh,
    open: (schema) => PostgresWorkflowStore.open(URL, schema),
  });

  test("migrations are recorded in the schema and not applied twice", async () => {
    const schema = await fresh();
    await (await PostgresWorkflowStore.open(URL, schema)).close();
    const store = await PostgresWorkflowStore.open(URL, schema);
    assert.equal(store.schemaVersion, LATEST_SCHEMA_VERSION);
    await store.close();
    const { rows } = await admin.query(
      `SELECT version, name FROM "${schema}".schema_migrations ORDER BY version`,
    );
    assert.deepEqual(
      rows,
      MIGRATIONS.map((m) => ({ version: m.version, name: m.name })),
    );
  });

  test("two nodes starting together migrate once", async () => {
    const schema = await fresh();
    const stores = await Promise.all([1, 2, 3].map(() => PostgresWorkflowStore.open(URL, schema)));
    for (const store of stores) await store.close();
    const { rows } = await admin.query(
      `SELECT count(*)::int AS n FROM "${schema}".schema_migrations`,
    );
    assert.equal(rows[0].n, MIGRATIONS.length);
  });

  test("a schema newer than this build is refused: storage_schema_too_new", async () => {
    const schema = await fresh();
    await (await PostgresWorkflowStore.open(URL, schema)).close();
    await admin.query(
      `INSERT INTO "${schema}".schema_migrations (version, name, applied_at) VALUES ($1, 'future', 0)`,
      [LATEST_SCHEMA_VERSION + 1],
    );
    await assert.rejects(
      PostgresWorkflowStore.open(URL, schema),
      (error: unknown) => error instanceof SkeinError && error.code === "storage_schema_too_new",
    );
  });

  test("an unreachable server is storage_unavailable, without the password", async () => {
    await assert.rejects(
      PostgresWorkflowStore.open("postgres://u:secret@127.0.0.1:1/none", "skein"),
      (error: unknown) =>
        error instanceof SkeinError &&
        error.code === "storage_unavailable" &&
        !error.message.includes("secret"),
    );
  });
});
