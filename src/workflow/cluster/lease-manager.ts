/**
 * The lease manager of one node: it keeps the node's membership alive (heartbeat), renews
 * every lease the node holds in one statement, computes the desired owner of every shard by
 * rendezvous hashing over the live nodes, takes the shards it should own when they are free
 * or expired (compare-and-swap that increments the epoch), and hands over the shards another
 * live node should own after draining them. It wakes on the cluster's NOTIFY (a node joined
 * or released shards) and otherwise every third of the lease TTL, or sooner when a lease or a
 * heartbeat it waits for runs out. The shard's engine is the hooks' business; the manager only
 * says when a shard is acquired (with its fence), when to drain it, and when it is lost.
 *
 * A shard's lease, as one node sees it (docs/cluster.md has the same diagram):
 *
 *    free / other's ──claim CAS, epoch+1──> recovering ──runs loaded──> owned
 *                                               │                        │  ▲ renew (one UPDATE
 *                                               │                        │  │ for all leases)
 *                                               │                        ├──┘
 *                                               │        desired elsewhere, that node live
 *                                               │                        v
 *                                               │                    draining ──last commit
 *                                               │                        │     landed, engine
 *                                               │                        │     closed──> release
 *                                               v                        v      (expired now,
 *                     lost <──renew misses it, expired locally, or a commit fenced   NOTIFY)
 *                       └──> engine stopped at once; free / other's
 *
 * Safety does not rest on this node's view: every commit to a shard checks the lease row at
 * the epoch granted, in the commit's own transaction (postgres/runs.ts), so a node that was
 * paused past its lease, or that lost the database, cannot write after a takeover.
 */

import type { Logger } from "../../common/log.ts";
import type { Claim, ClusterTables, LiveNode, NodeSelf } from "../persistence/postgres/cluster.ts";
import type { ShardFence } from "../persistence/postgres/runs.ts";
import { desiredOwners } from "./rendezvous.ts";

export type ShardState = "recovering" | "owned" | "draining";

export interface LeaseHooks {
  /**
   * The shard is this node's at `fence.epoch`: load its runs and serve it. `takeover`: the
   * lease was last held by another node (its in-flight attempts cannot re-attach here).
   */
  acquire(fence: ShardFence, takeover: boolean): Promise<void>;
  /** Another node should own the shard: let its last commit land and stop serving it. */
  drain(shard: number): Promise<void>;
  /**
   * Resolves once the node's claims fit its share (called after `changed` lowered it and the
   * drains ended, before the shards are released), so no node claims past its share while
   * shards move.
   */
  fits(): Promise<void>;
  /** The lease is gone (taken over or expired): stop serving the shard at once. */
  lost(shard: number, reason: string): void;
  /** The set of owned shards changed (the per-node ceiling share follows it). */
  changed(owned: number, total: number): void;
}

export interface LeaseManagerOptions {
  readonly tables: ClusterTables;
  readonly self: NodeSelf;
  readonly total: number;
  readonly ttlMs: number;
  readonly hooks: LeaseHooks;
  readonly logger: Logger;
  /** The node cannot stay a member (another process took its id): it must stop. */
  readonly onFatal: (error: Error) => void;
}

interface Held {
  readonly epoch: bigint;
  state: ShardState;
}

/** Where a shard is served, as last observed (for routing requests). */
export interface ShardOwner {
  readonly nodeId: string;
  readonly httpUrl: string;
}

export class LeaseManager {
  readonly #o: LeaseManagerOptions;
  readonly #held = new Map<number, Held>();
  #owners: (string | null)[] = [];
  /** Each shard's rendezvous owner as of the last round. */
  #desired: (string | undefined)[] = [];
  #nodes = new Map<string, LiveNode>();
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | undefined;
  #again = false;
  #closed = false;
  /** Local time by which every lease renewed last has expired (the node's own safety net). */
  #validUntil = 0;
  #waiters: (() => void)[] = [];
  readonly #acquiring = new Set<Promise<void>>();
  /** Why the last round failed (undefined after a good one). */
  #failure: unknown;

  constructor(options: LeaseManagerOptions) {
    this.#o = options;
  }

  get self(): NodeSelf {
    return this.#o.self;
  }

  /** Shards served here now (recovering and draining included), with their state. */
  states(): ReadonlyMap<number, ShardState> {
    return new Map([...this.#held].map(([s, h]) => [s, h.state]));
  }

  /** True when this node serves `shard` (its runs are loaded, it is not handing it over). */
  serves(shard: number): boolean {
    return this.#held.get(shard)?.state === "owned";
  }

  /** The node serving `shard` as last observed, or undefined while it has no live owner. */
  ownerOf(shard: number): ShardOwner | undefined {
    if (this.serves(shard)) return { nodeId: this.#o.self.nodeId, httpUrl: "" };
    const owner = this.#owners[shard];
    const node = owner === null || owner === undefined ? undefined : this.#nodes.get(owner);
    return node === undefined ? undefined : { nodeId: node.nodeId, httpUrl: node.httpUrl };
  }

  /** Every other live node (for requests that must ask each, like interventions). */
  peers(): ShardOwner[] {
    return [...this.#nodes.values()]
      .filter((n) => n.nodeId !== this.#o.self.nodeId)
      .map((n) => ({ nodeId: n.nodeId, httpUrl: n.httpUrl }));
  }

  /** Resolves after the next completed tick (or at once when closed). */
  settled(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.#waiters.push(resolve);
      this.wake();
    });
  }

  /** First tick (membership and first claims, their runs recovered), then the loop. */
  async start(): Promise<void> {
    await this.#tick();
    if (this.#failure !== undefined) throw this.#failure;
    await Promise.allSettled([...this.#acquiring]);
  }

  /** Runs a tick now (a NOTIFY arrived, or a commit was fenced). */
  wake(): void {
    if (this.#closed) return;
    if (this.#ticking !== undefined) {
      this.#again = true;
      return;
    }
    void this.#tick();
  }

  /** A shard's commit was fenced: it is lost whatever the last renewal said. */
  fenced(shard: number): void {
    this.#lose(shard, "a commit was fenced (the lease moved on)");
    this.wake();
  }

  /** Drains every shard, gives the leases back and leaves the cluster. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#ticking;
    const handing = [...this.#held.keys()];
    // The share drops to nothing before any shard is handed back (see #handOver).
    for (const held of this.#held.values()) held.state = "draining";
    this.#changed();
    await Promise.all(handing.map((s) => this.#drainOne(s)));
    const epochs = new Map<number, bigint>();
    for (const s of handing) {
      const held = this.#held.get(s);
      if (held !== undefined) epochs.set(s, held.epoch);
    }
    this.#held.clear();
    try {
      await this.#o.tables.release(this.#o.self, epochs);
      await this.#o.tables.leave(this.#o.self);
    } catch (error) {
      this.#o.logger.warn({ err: error }, "leaving the cluster: the leases will expire instead");
    }
    for (const done of this.#waiters.splice(0)) done();
  }

  #tick(): Promise<void> {
    const run = this.#round()
      .then((nextMs) => {
        this.#failure = undefined;
        return nextMs;
      })
      .catch((error: unknown) => {
        this.#failure = error;
        this.#o.logger.warn({ err: error }, "cluster lease round failed; retrying");
        if (Date.now() >= this.#validUntil) {
          for (const s of [...this.#held.keys()]) this.#lose(s, "leases not renewed in time");
        }
        return this.#period();
      })
      .then((nextMs) => {
        this.#ticking = undefined;
        for (const done of this.#waiters.splice(0)) done();
        if (this.#closed) return;
        if (this.#again) {
          this.#again = false;
          this.wake();
          return;
        }
        clearTimeout(this.#timer);
        this.#timer = setTimeout(() => this.wake(), nextMs);
        this.#timer.unref();
      });
    this.#ticking = run;
    return run;
  }

  #period(): number {
    return Math.max(50, Math.floor(this.#o.ttlMs / 3));
  }

  /** One round: heartbeat, renew, observe, claim, hand over. Returns ms until the next. */
  async #round(): Promise<number> {
    const { tables, self, total } = this.#o;
    const sentAt = Date.now();
    if (!(await tables.heartbeat(self))) {
      for (const s of [...this.#held.keys()]) this.#lose(s, "another process took this node id");
      this.#closed = true;
      this.#o.onFatal(new Error(`node ${self.nodeId}: a newer incarnation joined the cluster`));
      return this.#period();
    }
    const renewed = await tables.renew(self);
    this.#validUntil = sentAt + this.#o.ttlMs;
    for (const [shard, held] of [...this.#held]) {
      if (renewed.get(shard) !== held.epoch) this.#lose(shard, "the lease was not renewed");
    }
    const seen = await tables.observe();
    this.#nodes = new Map(seen.nodes.map((n) => [n.nodeId, n]));
    const desired = desiredOwners([...this.#nodes.keys(), self.nodeId], total);
    this.#desired = desired;
    this.#owners = seen.leases.map((l) => (l.expiresInMs > 0 ? l.owner : null));
    const claimable: number[] = [];
    let nextMs = this.#period();
    for (const lease of seen.leases) {
      const mine = desired[lease.shard] === self.nodeId;
      if (mine && !this.#held.has(lease.shard)) {
        const free =
          lease.owner === null ||
          lease.expiresInMs <= 0 ||
          (lease.owner === self.nodeId && lease.incarnation !== self.incarnation);
        if (free) claimable.push(lease.shard);
        else nextMs = Math.min(nextMs, lease.expiresInMs + 20);
      }
    }
    // A node that stops heartbeating leaves the live set when its heartbeat runs out.
    for (const n of seen.nodes) {
      if (n.nodeId !== self.nodeId) nextMs = Math.min(nextMs, n.liveForMs + 20);
    }
    this.#take(await tables.claim(self, claimable));
    this.#handOver();
    return Math.max(20, Math.ceil(nextMs));
  }

  #take(granted: ReadonlyMap<number, Claim>): void {
    const { self, hooks } = this.#o;
    for (const [shard, { epoch, from }] of granted) {
      const held: Held = { epoch, state: "recovering" };
      this.#held.set(shard, held);
      this.#owners[shard] = self.nodeId;
      const fence = { shard, nodeId: self.nodeId, incarnation: self.incarnation, epoch };
      const acquiring = hooks.acquire(fence, from !== self.nodeId).then(
        () => {
          if (this.#held.get(shard) !== held) return;
          held.state = "owned";
          // A node that joined while the shard recovered should have it: hand it over now,
          // not a lease round later.
          if (!this.#closed) this.#handOver();
        },
        (error: unknown) => {
          this.#o.logger.error({ err: error, shard }, "shard not recovered; giving it up");
          this.#lose(shard, "recovery failed");
        },
      );
      this.#acquiring.add(acquiring);
      void acquiring.finally(() => this.#acquiring.delete(acquiring));
    }
    if (granted.size > 0) this.#changed();
  }

  /**
   * Shards another live node should own are handed over in three steps, so that no node
   * claims past `ceil(quota × s / S)` at any moment: the share drops first (`changed`: the
   * node gives back claims beyond its new share), the shards drain, and only once the claims
   * fit are the leases released (one statement) for the new owner to take.
   */
  #handOver(): void {
    const leaving: number[] = [];
    for (const [shard, held] of this.#held) {
      const want = this.#desired[shard];
      if (held.state === "owned" && want !== undefined && want !== this.#o.self.nodeId) {
        held.state = "draining";
        leaving.push(shard);
      }
    }
    if (leaving.length === 0) return;
    this.#changed();
    void Promise.all(leaving.map((s) => this.#drainOne(s))).then(async () => {
      await this.#o.hooks.fits();
      const epochs = new Map<number, bigint>();
      for (const s of leaving) {
        const held = this.#held.get(s);
        if (held?.state === "draining") {
          epochs.set(s, held.epoch);
          this.#held.delete(s);
        }
      }
      await this.#o.tables.release(this.#o.self, epochs).catch((error: unknown) => {
        this.#o.logger.warn({ err: error }, "release failed; the leases will expire instead");
      });
    });
  }

  async #drainOne(shard: number): Promise<void> {
    try {
      await this.#o.hooks.drain(shard);
    } catch (error) {
      this.#o.logger.warn({ err: error, shard }, "drain failed");
    }
  }

  #lose(shard: number, reason: string): void {
    const held = this.#held.get(shard);
    if (held === undefined) return;
    this.#held.delete(shard);
    this.#owners[shard] = null;
    this.#o.logger.warn({ shard, reason }, "shard lease lost");
    this.#o.hooks.lost(shard, reason);
    this.#changed();
    // If the row is still ours at that epoch (a commit failed for another reason), give it
    // back so the shard can be claimed again, at a new epoch; otherwise this changes nothing.
    this.#o.tables.release(this.#o.self, new Map([[shard, held.epoch]])).catch(() => {});
  }

  #changed(): void {
    let owned = 0;
    for (const h of this.#held.values()) if (h.state !== "draining") owned++;
    this.#o.hooks.changed(owned, this.#o.total);
  }
}
