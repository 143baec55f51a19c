// The MCP server's store connections, one per pass, against a real store with `idp` and the
// real dev skein-idp: bounded (the least recently used idle one is closed for a new pass;
// all busy is store_connections_busy), shared by the requests of one pass, and a pass the
// store refuses is its refusal.

import assert from "node:assert/strict";
import { test } from "node:test";
import { PassPool } from "../../../src/store/mcp/pool.ts";
import { until } from "../../support/until.ts";
import { agent, DATABASE, idpStore, runIdp } from "../idp/support.ts";

const idp = await runIdp();
const served = await idpStore(idp);
const passes = await Promise.all(
  ["p1", "p2", "p3"].map(
    async (id) => (await agent(idp, `pool-${id}`, [["read", `db/${DATABASE}`]])).pass,
  ),
);

test("one connection per pass, shared; at most maxConnections, the idle LRU closed", async () => {
  const pool = new PassPool({ socketPath: served.socketPath, maxConnections: 2 });
  const [a, b] = await Promise.all([pool.acquire(passes[0]!), pool.acquire(passes[0]!)]);
  assert.equal(a.client, b.client, "one connection for one pass");
  assert.equal(pool.size, 1);
  a.release();
  b.release();
  const second = await pool.acquire(passes[1]!);
  second.release();
  const third = await pool.acquire(passes[2]!);
  third.release();
  assert.equal(pool.size, 2);
  // The first pass's connection was the least recently used: it was closed.
  await until("the least recently used connection to close", () => a.client.closed);
  assert.equal(second.client.closed, false);
  await pool.close();
});

test("every connection busy: a new pass is store_connections_busy", async () => {
  const pool = new PassPool({ socketPath: served.socketPath, maxConnections: 2 });
  const held = [await pool.acquire(passes[0]!), await pool.acquire(passes[1]!)];
  await assert.rejects(pool.acquire(passes[2]!), { code: "store_connections_busy" });
  held[0]!.release();
  const next = await pool.acquire(passes[2]!);
  next.release();
  held[1]!.release();
  await pool.close();
});

test("a refused pass is the store's refusal and is not kept", async () => {
  const pool = new PassPool({ socketPath: served.socketPath, maxConnections: 2 });
  await assert.rejects(pool.acquire("not.a.pass"), { code: "pass_invalid" });
  assert.equal(pool.size, 0);
  await pool.close();
});

test("no store at the socket is store_unavailable", async () => {
  const pool = new PassPool({ socketPath: `${served.socketPath}.absent`, maxConnections: 2 });
  await assert.rejects(pool.acquire(passes[0]!), { code: "store_unavailable" });
  assert.equal(pool.size, 0);
});
