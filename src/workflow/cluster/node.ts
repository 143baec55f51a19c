/**
 * A node's membership of a cluster, wired: the per-shard engines (shard-engines.ts), the lease
 * manager that grants and takes shards (lease-manager.ts) and the LISTEN that wakes it. The
 * server builds this instead of a single engine when its storage can hold a cluster
 * (PostgreSQL); a one-node cluster owns every shard. Joining needs the node's HTTP address,
 * so it happens once the API listens; the start-up waits for the shards granted in the first
 * round to be recovered before the node reports itself ready.
 */

import type { Logger } from "../../common/log.ts";
import type { Engine } from "../engine/engine.ts";
import type { ClaimBudget } from "../engine/outbox.ts";
import type { EngineStore } from "../engine/store.ts";
import type { ShardFence } from "../persistence/postgres/runs.ts";
import type { ClusterStorage } from "../persistence/store.ts";
import { type BudgetShare, NodeClaimBudget } from "./claim-budget.ts";
import { LeaseManager } from "./lease-manager.ts";
import { DRAIN_MAX_MS, ShardEngines } from "./shard-engines.ts";

export interface ClusterSettings {
  readonly nodeId: string;
  readonly shards: number;
  readonly leaseTtlMs: number;
}

export interface ClusterNodeOptions {
  readonly storage: ClusterStorage;
  readonly settings: ClusterSettings;
  readonly logger: Logger;
  /**
   * An engine over a shard's fenced store; `onFatal` must be passed to its options, and
   * `budget` to its outbox options (the node's ceiling share, shared by its shards).
   */
  readonly engine: (
    store: EngineStore,
    onFatal: (error: unknown) => void,
    budget: ClaimBudget,
  ) => Engine;
  /** `namespaces.max_in_flight_activities`: the quota the node's share is taken of. */
  readonly quota: number;
  /** The node cannot stay a member; the process should stop. */
  readonly onFatal: (error: Error) => void;
  /** Another node changed the deployment records (their NOTIFY). */
  readonly onDeployments?: () => void;
}

export class ClusterNode {
  readonly engines: ShardEngines;
  /** The node's ceiling share, following its ownership. */
  readonly budget: NodeClaimBudget;
  readonly #shares = new Map<number, BudgetShare>();
  readonly #o: ClusterNodeOptions;
  #manager: LeaseManager | undefined;
  #unlisten: (() => Promise<void>) | undefined;

  constructor(options: ClusterNodeOptions) {
    this.#o = options;
    const { storage, settings, logger } = options;
    this.budget = new NodeClaimBudget(options.quota, settings.shards);
    this.engines = new ShardEngines({
      total: settings.shards,
      runShardById: (runId) => storage.runShardById(runId),
      serves: (shard) => this.#manager?.serves(shard) ?? false,
      make: (fence: ShardFence, onFailed) => {
        this.#retire(fence.shard);
        const share = this.budget.share();
        this.#shares.set(fence.shard, share);
        return options.engine(
          storage.shardRuns(fence),
          (error) => {
            logger.warn({ err: error, shard: fence.shard }, "shard engine stopped: commit refused");
            onFailed();
          },
          share.budget,
        );
      },
      onShardFailed: (shard) => this.#manager?.fenced(shard),
    });
  }

  /** The lease manager, once joined. */
  get manager(): LeaseManager | undefined {
    return this.#manager;
  }

  /** Checks the shard count, joins with `httpUrl`, and recovers the first shards granted. */
  async join(httpUrl: string): Promise<void> {
    const { storage, settings, logger } = this.#o;
    const tables = storage.tables(settings.leaseTtlMs);
    await tables.ensureShards(settings.shards);
    const self = await tables.join(settings.nodeId, httpUrl);
    const manager = new LeaseManager({
      tables,
      self,
      total: settings.shards,
      ttlMs: settings.leaseTtlMs,
      logger,
      onFatal: this.#o.onFatal,
      hooks: {
        acquire: (fence, takeover) => this.engines.acquire(fence, takeover),
        drain: async (shard) => {
          await this.engines.drain(shard);
          this.#retire(shard);
        },
        fits: () => this.budget.fits(DRAIN_MAX_MS),
        lost: (shard) => {
          this.engines.lose(shard);
          this.#retire(shard);
        },
        changed: (owned) => this.budget.owned(owned),
      },
    });
    this.#manager = manager;
    this.#unlisten = await storage.listen((topic) => {
      if (topic === "deployments") this.#o.onDeployments?.();
      else manager.wake();
    });
    await tables.notify();
    await manager.start();
    logger.info(
      {
        node_id: settings.nodeId,
        incarnation: String(self.incarnation),
        shards: manager.states().size,
      },
      "joined the cluster",
    );
  }

  /** A shard's engine is gone: its outbox leaves the node's budget. */
  #retire(shard: number): void {
    this.#shares.get(shard)?.leave();
    this.#shares.delete(shard);
  }

  /** Hands every shard over (drained, released) and leaves the cluster. */
  async close(): Promise<void> {
    await this.#manager?.close();
    await this.#unlisten?.();
    this.engines.close();
  }
}
