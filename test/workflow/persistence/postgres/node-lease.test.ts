// The node lease on PostgreSQL: one node per schema. A second node is refused while the
// first holds the lease, and takes it once the first releases it; a lease whose session
// the database ends (here: pg_terminate_backend, as a restart or a network failure would)
// reports itself lost, so the server stops rather than run beside the next holder.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { SkeinError } from "../../../../src/common/errors.ts";
import {
  LEASE_APPLICATION_NAME,
  NodeLease,
} from "../../../../src/workflow/persistence/postgres/node-lease.ts";
import { POSTGRES_URL, postgresUnreachable } from "../../../support/postgres.ts";

const URL = POSTGRES_URL;

const refused = (text: string) => (error: unknown) =>
  error instanceof SkeinError &&
  error.code === "storage_unavailable" &&
  error.message.includes(text);

function lease(schema: string, onLost: (error: Error) => void = () => {}, pingMs?: number) {
  return NodeLease.acquire({
    url: URL,
    schema,
    where: `test (schema ${schema})`,
    onLost,
    ...(pingMs === undefined ? {} : { pingMs }),
  });
}

const fresh = () => `skein_lease_${randomBytes(6).toString("hex")}`;

describe("node lease", { skip: await postgresUnreachable() }, () => {
  let admin: pg.Client;
  before(async () => {
    admin = new pg.Client({ connectionString: URL });
    await admin.connect();
  });
  after(() => admin.end());

  test("a second node on the schema is refused; it gets the lease once the first lets go", async () => {
    const schema = fresh();
    const first = await lease(schema);
    await assert.rejects(lease(schema), refused("in use by another skein serve"));
    await first.release();
    const second = await lease(schema);
    await second.release();
  });

  test("nodes on different schemas do not meet", async () => {
    const a = await lease(fresh());
    const b = await lease(fresh());
    await a.release();
    await b.release();
  });

  test("a session the database ends is reported lost, once; the lease is free again", async () => {
    const schema = fresh();
    const lost: Error[] = [];
    const held = await lease(schema, (error) => lost.push(error), 200);
    const { rows } = await admin.query<{ name: string }>(
      "SELECT application_name AS name FROM pg_stat_activity WHERE pid = $1",
      [held.sessionPid],
    );
    assert.deepEqual(rows, [{ name: LEASE_APPLICATION_NAME }]);
    await admin.query("SELECT pg_terminate_backend($1)", [held.sessionPid]);
    for (let i = 0; i < 100 && lost.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(lost.length, 1);
    assert.ok(refused("the node lease was lost")(lost[0]));
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(lost.length, 1, "reported once");
    await held.release();
    const again = await lease(schema);
    await again.release();
  });

  test("a released lease never reports a loss", async () => {
    const lost: Error[] = [];
    const held = await lease(fresh(), (error) => lost.push(error), 50);
    await held.release();
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(lost, []);
  });

  test("an unreachable database is storage_unavailable, without the password", async () => {
    await assert.rejects(
      NodeLease.acquire({
        url: "postgres://u:secret@127.0.0.1:1/none",
        schema: "skein",
        where: "postgres://u:redacted@127.0.0.1:1/none (schema skein)",
        onLost: () => {},
      }),
      (error: unknown) =>
        refused("cannot take the node lock")(error) && !(error as Error).message.includes("secret"),
    );
  });
});
