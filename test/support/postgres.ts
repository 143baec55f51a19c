// The local PostgreSQL the tests use (trust auth; override with SKEIN_TEST_POSTGRES_URL),
// whether it answers (a reason to skip when it does not, a failure under CI), and fresh
// schemas that are dropped when the test ends.

import { randomBytes } from "node:crypto";
import type { TestContext } from "node:test";
import pg from "pg";
import { redactUrl } from "../../src/workflow/persistence/postgres/store.ts";

export const POSTGRES_URL =
  process.env.SKEIN_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Undefined when PostgreSQL answers; otherwise why not (for `{ skip }`). */
export async function postgresUnreachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    return `PostgreSQL at ${redactUrl(POSTGRES_URL)} is not reachable (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A new schema name, dropped (with everything in it) when the test `t` ends. */
export function freshSchema(t: TestContext, prefix = "skein_test"): string {
  const schema = `${prefix}_${randomBytes(6).toString("hex")}`;
  t.after(async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });
  return schema;
}

/**
 * For `{ skip }` of tests that need PostgreSQL: undefined when it answers; the reason to skip
 * when it does not, except under CI (env CI set), where a missing PostgreSQL is a failure.
 */
export async function postgresRequired(): Promise<string | undefined> {
  const reason = await postgresUnreachable();
  if (reason !== undefined && process.env.CI !== undefined && process.env.CI !== "") {
    throw new Error(`${reason}; CI is set, so this is a failure, not a skip`);
  }
  return reason;
}
