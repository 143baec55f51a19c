/**
 * `ClusterStorage` on PostgreSQL (see ../store.ts): the pieces a cluster node needs beyond
 * the domain stores. The wake-up channel is a dedicated connection LISTENing on the cluster
 * channel; when it breaks it reconnects after a pause, and the lease manager's polling covers
 * the gap, so a lost notification only delays a handover, never breaks one. The lease tables
 * have a small pool of their own: a renewal must never wait in line behind the engine's
 * commits for a connection, or a busy node would lose its leases to its own load.
 */

import pg from "pg";
import type { ClusterStorage } from "../store.ts";
import { CLUSTER_CHANNEL, ClusterTables } from "./cluster.ts";
import { PostgresDatabase } from "./driver.ts";
import { type ShardFence, shardRunStore } from "./runs.ts";

/** How long a broken LISTEN connection waits before it connects again. */
export const LISTEN_RETRY_MS = 1_000;

/** Connections of the lease pool: the lease rounds run one at a time, plus a release. */
export const LEASE_POOL_SIZE = 2;

export function postgresCluster(
  url: string,
  schema: string,
  pool: pg.Pool,
): ClusterStorage & { close(): Promise<void> } {
  let leasePool: pg.Pool | undefined;
  const leases = () => {
    if (leasePool === undefined) {
      leasePool = new pg.Pool({
        connectionString: url,
        max: LEASE_POOL_SIZE,
        options: `-c search_path=${schema}`,
      });
      leasePool.on("error", () => {});
    }
    return leasePool;
  };
  return {
    schema,
    tables: (ttlMs) => new ClusterTables(leases(), schema, ttlMs),
    close: async () => {
      if (leasePool !== undefined && !leasePool.ending) await leasePool.end();
    },
    shardRuns: (fence: ShardFence) => shardRunStore(new PostgresDatabase(pool), fence),
    listen: (wake) => listen(url, schema, wake),
    notify: async (topic) => {
      await pool.query("SELECT pg_notify($1, $2)", [CLUSTER_CHANNEL, `${schema}:${topic}`]);
    },
    runShard: async (namespace, workflowId) => {
      const { rows } = await pool.query<{ shard: number }>(
        "SELECT shard FROM workflow_runs WHERE namespace = $1 AND workflow_id = $2",
        [namespace, workflowId],
      );
      return rows[0]?.shard;
    },
    runShardById: async (runId) => {
      const { rows } = await pool.query<{ shard: number }>(
        "SELECT shard FROM workflow_runs WHERE run_id = $1",
        [runId],
      );
      return rows[0]?.shard;
    },
  };
}

async function listen(
  url: string,
  schema: string,
  wake: (topic: string) => void,
): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url, keepAlive: true });
    const again = () => {
      if (stopped || client !== next) return;
      client = undefined;
      void next.end().catch(() => {});
      retry = setTimeout(() => void connect().catch(() => {}), LISTEN_RETRY_MS);
      retry.unref();
    };
    client = next;
    next.on("error", again);
    next.on("end", again);
    next.on("notification", (n) => {
      if (n.channel !== CLUSTER_CHANNEL || n.payload === undefined) return;
      if (n.payload === schema) wake("");
      else if (n.payload.startsWith(`${schema}:`)) wake(n.payload.slice(schema.length + 1));
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${CLUSTER_CHANNEL}`);
      // Whatever was notified while this connection was down is caught up now.
      wake("");
      wake("deployments");
    } catch {
      again();
    }
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => {});
  };
}
