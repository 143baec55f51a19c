/**
 * A cluster node's engine: one `Engine` per owned shard, each over a store scoped and fenced
 * to its shard (postgres/runs.ts), behind the same face the run service and the matcher use
 * with a single engine. A shard's engine is created when its lease is granted (its runs are
 * recovered from history), closed after its last commit lands when the shard is handed over,
 * and stopped at once when the lease is lost. A run's children live in its shard, so a run
 * tree (and its cancel cascade) never crosses engines. The matcher, one per node, reports
 * results and heartbeats here; each goes to the engine holding the run, and a result for a
 * run no engine here holds is acknowledged and dropped: the shard's new owner dispatched
 * that attempt again when it recovered the run, so an activity is still recorded once.
 */

import { SkeinError } from "../../common/errors.ts";
import type { AttemptRef } from "../../protocol/attempt.ts";
import type { Dispatcher, MatcherEvents, ResultReceipt } from "../engine/dispatcher.ts";
import type { ControlResult, Engine, StartRun } from "../engine/engine.ts";
import type { RunStatus } from "../engine/history.ts";
import type { RunState } from "../engine/state.ts";
import { workflowError } from "../errors.ts";
import type { ShardFence } from "../persistence/postgres/runs.ts";
import { shardOf } from "../persistence/store.ts";

/** The shard a new run of (namespace, workflow id) is placed in. */
export function runShard(namespace: string, workflowId: string, total: number): number {
  return shardOf(`${namespace}\u0000${workflowId}`, total);
}

/**
 * The longest a handover waits for claims it cannot take back (relayed to another node's
 * worker) to be placed before the shards are released anyway.
 */
export const DRAIN_MAX_MS = 2_000;

export interface ShardEnginesOptions {
  readonly total: number;
  /** A new engine over the shard's fenced store; `onFenced` when a commit is refused. */
  readonly make: (fence: ShardFence, onFenced: () => void) => Engine;
  /** A shard's commit was fenced or failed: the lease manager treats the shard as lost. */
  readonly onShardFailed: (shard: number) => void;
  /** The shard of a stored run, for a control of a run no engine here holds. */
  readonly runShardById: (runId: string) => Promise<number | undefined>;
  /** Whether this node serves the shard now. */
  readonly serves: (shard: number) => boolean;
}

export class ShardEngines {
  readonly #o: ShardEnginesOptions;
  readonly #engines = new Map<number, Engine>();
  readonly #recovering = new Set<Promise<unknown>>();
  #dispatcher: Dispatcher | undefined;
  /** What this node's workers report about attempts it holds for another node (relay). */
  #foreign: MatcherEvents | undefined;
  #closed = false;
  readonly matcherEvents: MatcherEvents;

  constructor(options: ShardEnginesOptions) {
    this.#o = options;
    this.matcherEvents = this.#events();
  }

  get total(): number {
    return this.#o.total;
  }

  /** Shards with an engine here. */
  get shards(): number[] {
    return [...this.#engines.keys()];
  }

  /** Reports about runs no engine here holds go to `events` (the task relay) first. */
  relayTo(events: MatcherEvents): void {
    this.#foreign = events;
  }

  attach(dispatcher: Dispatcher): void {
    this.#dispatcher = dispatcher;
    for (const engine of this.#engines.values()) engine.attach(dispatcher);
  }

  /**
   * The shard is granted: its engine recovers the shard's runs and then serves them. After a
   * takeover (`takeover`: another node held the shard) the attempts that may have run there
   * are renumbered by the recovery.
   */
  async acquire(fence: ShardFence, takeover: boolean): Promise<void> {
    this.#engines.get(fence.shard)?.close();
    const engine = this.#o.make(fence, () => this.#o.onShardFailed(fence.shard));
    if (this.#dispatcher !== undefined) engine.attach(this.#dispatcher);
    this.#engines.set(fence.shard, engine);
    const recovery = engine.recover({ takeover });
    this.#recovering.add(recovery);
    try {
      await recovery;
    } finally {
      this.#recovering.delete(recovery);
    }
  }

  /**
   * Hands the shard over at once, without waiting for a quiet moment (under load there is
   * none): its outbox claims still waiting for a worker are taken back, the engine stops
   * taking inputs, and the commit in flight lands. What it had not committed is refused
   * (callers retry at the new owner, workers resend); results that arrive later find no
   * engine here. The new owner renumbers what was in flight (a takeover), so nothing that
   * ran here is run again under the same attempt.
   */
  async drain(shard: number): Promise<void> {
    const engine = this.#engines.get(shard);
    if (engine === undefined) return;
    this.#engines.delete(shard);
    engine.giveBackClaims();
    await engine.closeLanded();
  }

  /** The lease is gone: the engine stops now (whatever it had not committed is refused). */
  lose(shard: number): void {
    const engine = this.#engines.get(shard);
    this.#engines.delete(shard);
    engine?.close();
  }

  /** The engine of the shard a run of (namespace, workflow id) is started in. */
  #startEngine(namespace: string, workflowId: string): Engine {
    const shard = runShard(namespace, workflowId, this.#o.total);
    const engine = this.#engines.get(shard);
    if (engine === undefined) {
      throw workflowError(
        "shard_unavailable",
        `shard ${shard} is not served by this node right now; retry`,
      );
    }
    return engine;
  }

  #engineOf(runId: string): Engine | undefined {
    for (const engine of this.#engines.values()) {
      if (engine.state(runId) !== undefined) return engine;
    }
    return undefined;
  }

  start(request: StartRun): Promise<void> {
    try {
      return this.#startEngine(request.namespace, request.workflowId)
        .start(request)
        .catch((error: unknown) => Promise.reject(this.#moved(error)));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * A request its shard's engine refused because the shard moved on meanwhile (its commit
   * was fenced, or the engine stopped as the lease was lost): nothing was recorded, and the
   * caller should retry, at the shard's new owner.
   */
  #moved(error: unknown): unknown {
    if (this.#closed || !(error instanceof SkeinError)) return error;
    if (error.code !== "shard_fenced" && error.code !== "engine_stopped") return error;
    return workflowError("shard_unavailable", `${error.message}; retry`, error);
  }

  state(runId: string): RunState | undefined {
    return this.#engineOf(runId)?.state(runId);
  }

  cancel(runId: string): Promise<ControlResult> {
    return this.#control(runId, (e) => e.cancel(runId));
  }

  pause(runId: string): Promise<ControlResult> {
    return this.#control(runId, (e) => e.pause(runId));
  }

  resume(runId: string): Promise<ControlResult> {
    return this.#control(runId, (e) => e.resume(runId));
  }

  signal(runId: string, signal: string, payloadJson: string): Promise<ControlResult> {
    return this.#control(runId, (e) => e.signal(runId, signal, payloadJson));
  }

  async #control(
    runId: string,
    act: (engine: Engine) => Promise<ControlResult>,
  ): Promise<ControlResult> {
    const engine = await this.#holder(runId);
    if (engine !== undefined) {
      return act(engine).catch((error: unknown) => Promise.reject(this.#moved(error)));
    }
    // Not held here: ended (the caller answers with the stored status), unless its shard is
    // not served here at all (a handover is under way), where the answer would be a guess.
    const shard = await this.#o.runShardById(runId);
    if (shard !== undefined && !this.#o.serves(shard)) {
      throw workflowError("shard_unavailable", `shard ${shard} is not served by this node now`);
    }
    return { runId, applied: false, status: undefined };
  }

  /** Outbox rows claimed now in a namespace, over every shard here. */
  claimed(namespace: string): number {
    let n = 0;
    for (const engine of this.#engines.values()) n += engine.claimed(namespace);
    return n;
  }

  /** Runs held in memory over every shard here. */
  get running(): number {
    let n = 0;
    for (const engine of this.#engines.values()) n += engine.running;
    return n;
  }

  /** Runs held in memory by status over every shard here (for scrapes). */
  statusCounts(): Map<RunStatus, number> {
    const counts = new Map<RunStatus, number>();
    for (const engine of this.#engines.values()) {
      for (const [status, n] of engine.statusCounts()) {
        counts.set(status, (counts.get(status) ?? 0) + n);
      }
    }
    return counts;
  }

  /** Outbox lanes per namespace, summed over every shard here (for scrapes). */
  outboxLanes(): Iterable<{ namespace: string; claimed: number; waiting: number }> {
    const lanes = new Map<string, { namespace: string; claimed: number; waiting: number }>();
    for (const engine of this.#engines.values()) {
      for (const lane of engine.outboxLanes()) {
        const sum = lanes.get(lane.namespace) ?? {
          namespace: lane.namespace,
          claimed: 0,
          waiting: 0,
        };
        sum.claimed += lane.claimed;
        sum.waiting += lane.waiting;
        lanes.set(lane.namespace, sum);
      }
    }
    return lanes.values();
  }

  /** This node's claim ceiling per namespace (the shards share one budget). */
  get outboxCeiling(): number {
    let ceiling = 0;
    for (const engine of this.#engines.values()) ceiling = Math.max(ceiling, engine.outboxCeiling);
    return ceiling;
  }

  async idle(): Promise<void> {
    await Promise.all([...this.#engines.values()].map((e) => e.idle()));
  }

  close(): void {
    this.#closed = true;
    for (const engine of this.#engines.values()) engine.close();
    this.#engines.clear();
  }

  /** The engine holding a run; while shards recover, asked again once they have. */
  async #holder(runId: string): Promise<Engine | undefined> {
    const engine = this.#engineOf(runId);
    if (engine !== undefined || this.#recovering.size === 0) return engine;
    await Promise.allSettled([...this.#recovering]);
    return this.#engineOf(runId);
  }

  /** Hands a result to the engine holding its run, else the foreign relay, else answers it. */
  #reportTo(ref: AttemptRef, receipt: ResultReceipt, report: (to: MatcherEvents) => void): void {
    this.#holder(ref.run_id)
      .then((engine) => {
        const to = engine?.matcherEvents ?? this.#foreign;
        if (to === undefined) receipt.recorded();
        else report(to);
      })
      .catch((error: unknown) => receipt.refused(error));
  }

  #events(): MatcherEvents {
    const byEngine = (refs: readonly AttemptRef[]) => {
      const groups = new Map<Engine, AttemptRef[]>();
      const rest: AttemptRef[] = [];
      for (const ref of refs) {
        const engine = this.#engineOf(ref.run_id);
        if (engine === undefined) {
          rest.push(ref);
          continue;
        }
        const group = groups.get(engine) ?? [];
        group.push(ref);
        groups.set(engine, group);
      }
      return { groups, rest };
    };
    return {
      completed: (ref, outputJson, ctx, receipt) =>
        this.#reportTo(ref, receipt, (to) => to.completed(ref, outputJson, ctx, receipt)),
      failed: (ref, failure, ctx, receipt) =>
        this.#reportTo(ref, receipt, (to) => to.failed(ref, failure, ctx, receipt)),
      heartbeat: (ref, details, ctx) =>
        (this.#engineOf(ref.run_id)?.matcherEvents ?? this.#foreign)?.heartbeat?.(
          ref,
          details,
          ctx,
        ),
      detached: (refs, ctx) => {
        const { groups, rest } = byEngine(refs);
        for (const [engine, group] of groups) engine.matcherEvents.detached?.(group, ctx);
        if (rest.length > 0) this.#foreign?.detached?.(rest, ctx);
      },
      attached: (refs, ctx) => {
        const { groups, rest } = byEngine(refs);
        for (const [engine, group] of groups) engine.matcherEvents.attached?.(group, ctx);
        if (rest.length > 0) this.#foreign?.attached?.(rest, ctx);
      },
      owner: (ref) => this.#engineOf(ref.run_id)?.matcherEvents.owner?.(ref),
      assigned: (ref) =>
        (this.#engineOf(ref.run_id)?.matcherEvents ?? this.#foreign)?.assigned?.(ref),
    };
  }
}

/** True for the error a fenced commit fails with. */
export function isFenced(error: unknown): boolean {
  return error instanceof SkeinError && error.code === "shard_fenced";
}
