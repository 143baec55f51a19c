/**
 * The outbox dispatcher: the members of `parallel` and `collect` steps do not go straight to
 * the matcher. Each member attempt is an outbox row (written with the event that schedules
 * it); the dispatcher claims rows per namespace, at most the namespace's ceiling at once, and
 * hands each claimed row to the matcher. A row is done as soon as a worker holds it (placement
 * counts as success), which frees its claim; the worker's `--concurrency` then bounds how many
 * handlers execute. The ceiling holds only while the outbox is enabled: a disabled outbox
 * installs no backpressure and members are dispatched like ordinary calls, which never pass
 * through here. Every row state change is reported through `record`, so the engine persists it
 * in its next group commit and a store sample never shows more claims than the ceiling.
 */

/**
 * A node's share of a namespace quota in a cluster: `ceil(quota × owned / total)`. Because of
 * the rounding, the shares of all nodes can add up to slightly more than the quota.
 */
export function nodeShare(quota: number, ownedShards: number, totalShards: number): number {
  if (!Number.isInteger(quota) || quota < 0) throw new RangeError(`bad quota ${quota}`);
  if (!Number.isInteger(totalShards) || totalShards < 1)
    throw new RangeError(`bad shard total ${totalShards}`);
  if (!Number.isInteger(ownedShards) || ownedShards < 0 || ownedShards > totalShards)
    throw new RangeError(`bad owned shard count ${ownedShards} of ${totalShards}`);
  // Integer arithmetic: (q·o + t − 1) div t is the ceiling without floating-point error.
  return Math.floor((quota * ownedShards + totalShards - 1) / totalShards);
}

/** An outbox sharing a node-wide ceiling (cluster mode: one outbox per owned shard). */
export interface BudgetMember {
  /** Rows claimed now in `namespace` by this outbox. */
  claimed(namespace: string): number;
  /** Claims what the budget allows in `namespace` (every namespace when undefined). */
  pump(namespace?: string): void;
  /** Namespaces this outbox has had rows in. */
  namespaces(): Iterable<string>;
  /** Gives back up to `max` claims of `namespace` still waiting for a worker; how many. */
  giveBack(namespace: string, max: number): number;
}

/**
 * A ceiling shared by several outboxes of one node: in a cluster each owned shard has its own
 * engine and outbox, and the node's share `ceil(quota × owned / total)` bounds their sum.
 */
export interface ClaimBudget {
  bind(member: BudgetMember): void;
  /** May one more row of `namespace` be claimed on this node now? */
  allows(namespace: string): boolean;
  /** A claim in `namespace` was freed: the other members may claim. */
  freed(namespace: string): void;
}

export interface OutboxOptions {
  /** `outbox.enabled`: the ceiling is in force only when true (default false). */
  readonly enabled: boolean;
  /** `namespaces.max_in_flight_activities` (default 1024): the namespace quota. */
  readonly maxInFlight?: number;
  /** Shards this node owns and shards in the cluster (default 1 of 1: a single node). */
  readonly ownedShards?: number;
  readonly totalShards?: number;
  /** A node-wide ceiling shared with other outboxes; replaces `ceiling` when set. */
  readonly budget?: ClaimBudget;
}

/** A member attempt waiting in, or claimed from, the outbox. */
export interface OutboxEntry<Owner> {
  readonly key: string;
  readonly namespace: string;
  readonly runId: string;
  readonly activityId: number;
  readonly attempt: number;
  readonly owner: Owner;
}

export interface OutboxHooks<Owner> {
  /** May the entry be handed off now? (false: its run is paused; it waits for `resume`.) */
  ready(entry: OutboxEntry<Owner>): boolean;
  /** Offers the attempt: `placed` when a worker holds it, `queued` when it waits for a slot. */
  handOff(entry: OutboxEntry<Owner>): "placed" | "queued" | "dropped";
  /** A row's new state, to persist with the next commit. */
  record(entry: OutboxEntry<Owner>, state: "pending" | "claimed" | "done"): void;
  /**
   * Takes back a claimed row's attempt if it still waits for a worker (true), so the claim
   * can be given back; without it no claim is ever given back.
   */
  withdraw?(entry: OutboxEntry<Owner>): boolean;
}

interface Lane<Owner> {
  readonly namespace: string;
  readonly pending: OutboxEntry<Owner>[];
  head: number;
  readonly claimed: Map<string, OutboxEntry<Owner>>;
  /** Entries of paused runs, set aside without a claim. */
  readonly held: OutboxEntry<Owner>[];
  pumping: boolean;
}

export class Outbox<Owner> {
  readonly enabled: boolean;
  /** This node's ceiling per namespace. */
  readonly ceiling: number;
  readonly #hooks: OutboxHooks<Owner>;
  readonly #budget: ClaimBudget | undefined;
  readonly #lanes = new Map<string, Lane<Owner>>();
  readonly #where = new Map<string, Lane<Owner>>();
  /** The highest claimed count seen in any namespace. */
  maxClaimed = 0;

  constructor(options: OutboxOptions, hooks: OutboxHooks<Owner>) {
    this.enabled = options.enabled;
    this.ceiling = nodeShare(
      options.maxInFlight ?? 1024,
      options.ownedShards ?? 1,
      options.totalShards ?? 1,
    );
    this.#hooks = hooks;
    this.#budget = options.budget;
    this.#budget?.bind(this);
  }

  /** Claims what the ceiling allows now (in `namespace`, or every namespace). */
  pump(namespace?: string): void {
    if (namespace !== undefined) {
      const lane = this.#lanes.get(namespace);
      if (lane !== undefined) this.#pump(lane);
      return;
    }
    for (const lane of this.#lanes.values()) this.#pump(lane);
  }

  /** Rows claimed now in `namespace`. */
  claimed(namespace: string): number {
    return this.#lanes.get(namespace)?.claimed.size ?? 0;
  }

  /** Rows waiting for a claim in `namespace` (held ones included). */
  waiting(namespace: string): number {
    const lane = this.#lanes.get(namespace);
    return lane === undefined ? 0 : lane.pending.length - lane.head + lane.held.length;
  }

  namespaces(): Iterable<string> {
    return this.#lanes.keys();
  }

  /**
   * Gives back up to `max` claims of `namespace` whose attempts still wait for a worker
   * (newest claims first): each goes back to the head of the line, pending again, and is
   * claimed again when the ceiling allows. A node whose share shrank calls this so that its
   * claims fit the new share before its shards move. Returns how many were given back.
   */
  giveBack(namespace: string, max: number): number {
    const lane = this.#lanes.get(namespace);
    const withdraw = this.#hooks.withdraw;
    if (lane === undefined || withdraw === undefined || max <= 0) return 0;
    const back: OutboxEntry<Owner>[] = [];
    for (const entry of [...lane.claimed.values()].reverse()) {
      if (back.length >= max) break;
      if (!withdraw(entry)) continue;
      lane.claimed.delete(entry.key);
      this.#hooks.record(entry, "pending");
      back.push(entry);
    }
    lane.pending.splice(lane.head, 0, ...back.reverse());
    return back.length;
  }

  /** Claimed and waiting rows of every namespace that has had a row (for metrics). */
  *lanes(): Generator<{ namespace: string; claimed: number; waiting: number }> {
    for (const namespace of this.#lanes.keys()) {
      yield { namespace, claimed: this.claimed(namespace), waiting: this.waiting(namespace) };
    }
  }

  /** Queues a pending row and claims what the ceiling allows. */
  add(entry: OutboxEntry<Owner>): void {
    if (this.#where.has(entry.key)) return;
    const lane = this.#lane(entry.namespace);
    lane.pending.push(entry);
    this.#where.set(entry.key, lane);
    this.#pump(lane);
  }

  /** A worker now holds the attempt: its row is done and its claim is freed. */
  placed(key: string): void {
    const lane = this.#where.get(key);
    const entry = lane?.claimed.get(key);
    if (lane === undefined || entry === undefined) return;
    lane.claimed.delete(key);
    this.#where.delete(key);
    this.#hooks.record(entry, "done");
    this.#pump(lane);
    this.#budget?.freed(lane.namespace);
  }

  /** The attempt is no longer wanted (its run ended, it timed out): the row is closed. */
  drop(key: string): void {
    const lane = this.#where.get(key);
    if (lane === undefined) return;
    this.#where.delete(key);
    let entry = lane.claimed.get(key);
    if (entry !== undefined) lane.claimed.delete(key);
    else {
      const at = lane.pending.findIndex((e, i) => i >= lane.head && e.key === key);
      if (at >= 0) [entry] = lane.pending.splice(at, 1);
      else {
        const h = lane.held.findIndex((e) => e.key === key);
        if (h >= 0) [entry] = lane.held.splice(h, 1);
      }
    }
    if (entry !== undefined) this.#hooks.record(entry, "done");
    this.#pump(lane);
    this.#budget?.freed(lane.namespace);
  }

  /** Entries set aside for a paused run go back in line (call when the run resumes). */
  resume(runId: string): void {
    for (const lane of this.#lanes.values()) {
      const back = lane.held.filter((e) => e.runId === runId);
      if (back.length === 0) continue;
      const keep = lane.held.filter((e) => e.runId !== runId);
      lane.held.length = 0;
      lane.held.push(...keep);
      lane.pending.push(...back);
      this.#pump(lane);
    }
  }

  #lane(namespace: string): Lane<Owner> {
    let lane = this.#lanes.get(namespace);
    if (lane === undefined) {
      lane = { namespace, pending: [], head: 0, claimed: new Map(), held: [], pumping: false };
      this.#lanes.set(namespace, lane);
    }
    return lane;
  }

  /** Claims pending rows while the lane is under its ceiling (no ceiling when disabled). */
  #pump(lane: Lane<Owner>): void {
    // A hand-off may report a placement synchronously; the outer loop goes on from there.
    if (lane.pumping) return;
    lane.pumping = true;
    try {
      const ceiling = this.enabled ? this.ceiling : Number.POSITIVE_INFINITY;
      const budget = this.enabled ? this.#budget : undefined;
      while (
        lane.head < lane.pending.length &&
        (budget === undefined ? lane.claimed.size < ceiling : budget.allows(lane.namespace))
      ) {
        const entry = lane.pending[lane.head]!;
        lane.head++;
        if (!this.#hooks.ready(entry)) {
          lane.held.push(entry);
          continue;
        }
        lane.claimed.set(entry.key, entry);
        if (lane.claimed.size > this.maxClaimed) this.maxClaimed = lane.claimed.size;
        this.#hooks.record(entry, "claimed");
        const outcome = this.#hooks.handOff(entry);
        if (outcome === "placed" || outcome === "dropped") {
          if (lane.claimed.delete(entry.key)) {
            this.#where.delete(entry.key);
            this.#hooks.record(entry, "done");
          }
        }
      }
      if (lane.head > 1024 && lane.head * 2 > lane.pending.length) {
        lane.pending.splice(0, lane.head);
        lane.head = 0;
      }
    } finally {
      lane.pumping = false;
    }
  }
}
