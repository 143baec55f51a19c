import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import pg from "pg";
import { adminToken, call, startServe, tempDir, writeConfig } from "./support/server.ts";

const URL = process.env.SKEIN_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

async function unreachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    return `PostgreSQL is not reachable (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => {});
  }
}

describe("skein serve on PostgreSQL storage (real process)", { skip: await unreachable() }, () => {
  test("a namespace acknowledged before SIGKILL is there after restart", async (t) => {
    const dir = await tempDir();
    const schema = `skein_test_${randomBytes(6).toString("hex")}`;
    t.after(async () => {
      const client = new pg.Client({ connectionString: URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
      await dir.remove();
    });
    const config = await writeConfig(
      dir.path,
      `[storage]\nurl = "${URL}"\nschema = "${schema}"\n[namespaces]\ndefault = "home"`,
    );
    const first = await startServe(config);
    assert.match(first.stdout(), new RegExp(`storage: postgres .*\\(schema ${schema}\\)`));
    const token = await adminToken(dir.path);
    const created = await call(first.url, "POST", "/namespaces", { token, body: { name: "pg" } });
    assert.deepEqual(created.body, { name: "pg", created: true });
    assert.equal((await first.stop("SIGKILL")).signal, "SIGKILL");

    const second = await startServe(config);
    try {
      const listed = await call(second.url, "GET", "/namespaces", { token });
      assert.deepEqual(listed.body, { namespaces: [{ name: "home" }, { name: "pg" }] });
    } finally {
      assert.equal((await second.stop()).code, 0);
    }
  });
});
