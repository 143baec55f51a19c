/**
 * The cluster's rows on PostgreSQL: the shard count fixed when the cluster is created, the
 * member nodes (id, incarnation, HTTP address, heartbeat) and one lease per shard (owner,
 * fencing epoch, expiry). Every time is the database's clock (`clock_timestamp()`), so nodes
 * whose clocks disagree still agree on who holds what. The lease manager
 * (src/workflow/cluster/lease-manager.ts) decides; this file only states each step as one
 * statement: join, heartbeat, renew every lease in one UPDATE, observe, claim by
 * compare-and-swap that increments the epoch, release, leave, and the wake-up NOTIFY.
 */

import type { Pool } from "pg";
import { workflowError } from "../../errors.ts";
import { inTransaction } from "./driver.ts";

/** The NOTIFY channel; the payload is the schema, so clusters sharing a database ignore each other. */
export const CLUSTER_CHANNEL = "skein_cluster";

export interface NodeSelf {
  readonly nodeId: string;
  readonly incarnation: bigint;
}

/** A node whose heartbeat is within the lease TTL. */
export interface LiveNode {
  readonly nodeId: string;
  readonly incarnation: bigint;
  readonly httpUrl: string;
  /** Milliseconds until its heartbeat is older than the TTL (database clock). */
  readonly liveForMs: number;
}

export interface LeaseRow {
  readonly shard: number;
  readonly owner: string | null;
  readonly incarnation: bigint | null;
  readonly epoch: bigint;
  /** Milliseconds until expiry (database clock); 0 or less: expired. */
  readonly expiresInMs: number;
}

export interface Observation {
  readonly nodes: readonly LiveNode[];
  readonly leases: readonly LeaseRow[];
}

/** A lease this node was granted or renewed: shard and epoch. */
export type Granted = Map<number, bigint>;

/** A lease this node claimed: its new epoch, and the node that held it last (null: none). */
export interface Claim {
  readonly epoch: bigint;
  readonly from: string | null;
}

function granted(rows: readonly { shard: number; epoch: string }[]): Granted {
  return new Map(rows.map((r) => [r.shard, BigInt(r.epoch)]));
}

export class ClusterTables {
  readonly #pool: Pool;
  readonly #schema: string;
  readonly #ttl: string;

  constructor(pool: Pool, schema: string, ttlMs: number) {
    this.#pool = pool;
    this.#schema = schema;
    this.#ttl = `${ttlMs} milliseconds`;
  }

  /**
   * The cluster's shard count: the stored one, or `shards` when this node creates the
   * cluster (with its lease rows). A node configured with another count is refused: the
   * count is part of where every run lives.
   */
  async ensureShards(shards: number): Promise<number> {
    const stored = await inTransaction(this.#pool, async (client) => {
      await client.query("LOCK TABLE cluster_meta IN EXCLUSIVE MODE");
      const { rows } = await client.query<{ shards: number }>("SELECT shards FROM cluster_meta");
      const found = rows[0]?.shards;
      if (found === undefined) {
        await client.query("INSERT INTO cluster_meta (shards) VALUES ($1)", [shards]);
        await client.query(
          "INSERT INTO shard_leases (shard) SELECT generate_series(0, $1::int - 1) " +
            "ON CONFLICT DO NOTHING",
          [shards],
        );
      }
      return found;
    });
    if (stored !== undefined && stored !== shards) {
      throw workflowError(
        "storage_unavailable",
        `the cluster in schema ${this.#schema} has ${stored} shards; this node is configured ` +
          `with cluster.shards = ${shards} (the count is fixed when the cluster is created)`,
      );
    }
    return shards;
  }

  /** Registers this node (a restart under the same id gets the next incarnation). */
  async join(nodeId: string, httpUrl: string): Promise<NodeSelf> {
    const { rows } = await this.#pool.query<{ incarnation: string }>(
      `INSERT INTO cluster_nodes (node_id, incarnation, http_url, started_at, heartbeat_at)
       VALUES ($1, 1, $2, clock_timestamp(), clock_timestamp())
       ON CONFLICT (node_id) DO UPDATE SET incarnation = cluster_nodes.incarnation + 1,
         http_url = excluded.http_url, started_at = excluded.started_at,
         heartbeat_at = excluded.heartbeat_at
       RETURNING incarnation`,
      [nodeId, httpUrl],
    );
    return { nodeId, incarnation: BigInt(rows[0]!.incarnation) };
  }

  /** False when this incarnation is no longer the node's (another process took the id). */
  async heartbeat(self: NodeSelf): Promise<boolean> {
    const { rowCount } = await this.#pool.query(
      "UPDATE cluster_nodes SET heartbeat_at = clock_timestamp() " +
        "WHERE node_id = $1 AND incarnation = $2",
      [self.nodeId, self.incarnation.toString()],
    );
    return rowCount === 1;
  }

  /** Extends every unexpired lease this incarnation holds, in one statement. */
  async renew(self: NodeSelf): Promise<Granted> {
    const { rows } = await this.#pool.query<{ shard: number; epoch: string }>(
      `UPDATE shard_leases SET expires_at = clock_timestamp() + $3::interval
       WHERE owner = $1 AND owner_incarnation = $2 AND expires_at > clock_timestamp()
       RETURNING shard, epoch`,
      [self.nodeId, self.incarnation.toString(), this.#ttl],
    );
    return granted(rows);
  }

  /** The live nodes and every lease, as the database sees them now. */
  async observe(): Promise<Observation> {
    const nodes = await this.#pool.query<{
      node_id: string;
      incarnation: string;
      http_url: string;
      live_ms: number;
    }>(
      `SELECT node_id, incarnation, http_url,
         (extract(epoch FROM heartbeat_at + $1::interval - clock_timestamp()) * 1000)::float8
           AS live_ms
       FROM cluster_nodes WHERE heartbeat_at + $1::interval > clock_timestamp()`,
      [this.#ttl],
    );
    const leases = await this.#pool.query<{
      shard: number;
      owner: string | null;
      owner_incarnation: string | null;
      epoch: string;
      expires_ms: number;
    }>(
      `SELECT shard, owner, owner_incarnation, epoch,
         greatest(-1, least(1e9,
           extract(epoch FROM expires_at - clock_timestamp()) * 1000))::float8 AS expires_ms
       FROM shard_leases ORDER BY shard`,
    );
    return {
      nodes: nodes.rows.map((n) => ({
        nodeId: n.node_id,
        incarnation: BigInt(n.incarnation),
        httpUrl: n.http_url,
        liveForMs: n.live_ms,
      })),
      leases: leases.rows.map((l) => ({
        shard: l.shard,
        owner: l.owner,
        incarnation: l.owner_incarnation === null ? null : BigInt(l.owner_incarnation),
        epoch: BigInt(l.epoch),
        expiresInMs: l.expires_ms,
      })),
    };
  }

  /**
   * Takes the shards that are free, expired, or held by an earlier incarnation of this node:
   * a compare-and-swap per row (the condition is checked under the row lock, and checked
   * again after waiting for it) that increments the epoch, so whatever the previous holder
   * still has in flight is fenced off. Each grant names the node that held the lease last,
   * so the new owner knows whether it takes over another node's runs.
   */
  async claim(self: NodeSelf, shards: readonly number[]): Promise<Map<number, Claim>> {
    if (shards.length === 0) return new Map();
    const { rows } = await this.#pool.query<{
      shard: number;
      epoch: string;
      previous: string | null;
    }>(
      `WITH prev AS (
         SELECT shard, owner FROM shard_leases
         WHERE shard = ANY($3::int[]) AND (owner IS NULL OR expires_at <= clock_timestamp()
           OR (owner = $1 AND owner_incarnation <> $2))
         FOR UPDATE)
       UPDATE shard_leases l SET owner = $1, owner_incarnation = $2, epoch = l.epoch + 1,
         expires_at = clock_timestamp() + $4::interval
       FROM prev WHERE l.shard = prev.shard
       RETURNING l.shard, l.epoch, prev.owner AS previous`,
      [self.nodeId, self.incarnation.toString(), shards, this.#ttl],
    );
    return new Map(rows.map((r) => [r.shard, { epoch: BigInt(r.epoch), from: r.previous }]));
  }

  /**
   * Gives drained shards back (only at the epoch held), and wakes the other nodes. The lease
   * expires at once but keeps its owner, so the next claim knows who held the shard last.
   */
  async release(self: NodeSelf, held: ReadonlyMap<number, bigint>): Promise<void> {
    if (held.size === 0) return;
    await this.#pool.query(
      `UPDATE shard_leases SET expires_at = 'epoch'
       FROM unnest($3::int[], $4::bigint[]) AS h(shard, epoch)
       WHERE shard_leases.shard = h.shard AND shard_leases.epoch = h.epoch
         AND owner = $1 AND owner_incarnation = $2`,
      [self.nodeId, self.incarnation.toString(), [...held.keys()], [...held.values()].map(String)],
    );
    await this.notify();
  }

  /** The node leaves: its heartbeat ends now, so the others stop counting it at once. */
  async leave(self: NodeSelf): Promise<void> {
    await this.#pool.query(
      "UPDATE cluster_nodes SET heartbeat_at = 'epoch' WHERE node_id = $1 AND incarnation = $2",
      [self.nodeId, self.incarnation.toString()],
    );
    await this.notify();
  }

  /** Wakes every node of this cluster (their LISTEN); polling is the backstop. */
  async notify(): Promise<void> {
    await this.#pool.query("SELECT pg_notify($1, $2)", [CLUSTER_CHANNEL, this.#schema]);
  }
}
