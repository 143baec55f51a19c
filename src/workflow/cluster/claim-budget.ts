/**
 * The node's share of each namespace's claim ceiling in a cluster (spec, Limits 5): a node
 * owning `s` of `S` shards claims at most `ceil(quota × s / S)` outbox rows per namespace,
 * recomputed whenever its ownership changes. Each owned shard has its own engine and outbox;
 * they all draw on this one budget, so the bound holds for their sum. When a claim is freed,
 * or the share grows, the other outboxes are asked to claim what is now allowed; when the
 * share shrinks, claims past it whose attempts still wait for a worker are given back at
 * once, and a handover releases its shards only once the claims fit (`fits`), so the bound
 * holds in every phase of a join or a leave.
 */

import { type BudgetMember, type ClaimBudget, nodeShare } from "../engine/outbox.ts";

export interface BudgetShare {
  /** What the shard's outbox is given (`OutboxOptions.budget`). */
  readonly budget: ClaimBudget;
  /** The shard's engine is gone: its outbox no longer counts. */
  leave(): void;
}

export class NodeClaimBudget {
  readonly #quota: number;
  readonly #total: number;
  readonly #members = new Set<BudgetMember>();
  #ceiling: number;
  /** Handovers waiting for the claims to fit the share. */
  #waiting: (() => void)[] = [];

  constructor(quota: number, total: number) {
    this.#quota = quota;
    this.#total = total;
    this.#ceiling = nodeShare(quota, 0, total);
  }

  /** This node's ceiling per namespace now. */
  get ceiling(): number {
    return this.#ceiling;
  }

  /**
   * Ownership changed: the share follows. A larger one is used at once; a smaller one takes
   * back, at once, the claims past it that no worker holds yet.
   */
  owned(shards: number): void {
    const before = this.#ceiling;
    this.#ceiling = nodeShare(this.#quota, Math.min(shards, this.#total), this.#total);
    if (this.#ceiling > before) for (const m of [...this.#members]) m.pump();
    if (this.#ceiling < before) this.#shrink();
  }

  /** Rows claimed now in `namespace` over every shard of this node. */
  claimed(namespace: string): number {
    let n = 0;
    for (const m of this.#members) n += m.claimed(namespace);
    return n;
  }

  /** Rows claimed now per namespace over every shard of this node (namespaces with rows). */
  claims(): Map<string, number> {
    return new Map(
      [...this.#namespaces()].map((namespace) => [namespace, this.claimed(namespace)]),
    );
  }

  /** The namespace whose claims exceed the share most, and by how much (0: they fit). */
  excess(): number {
    let most = 0;
    for (const namespace of this.#namespaces()) {
      most = Math.max(most, this.claimed(namespace) - this.#ceiling);
    }
    return most;
  }

  /**
   * Resolves once every namespace's claims fit the share. Claims that cannot be given back (a
   * worker of another node may hold them) fit once placed; after `maxMs` it resolves anyway.
   */
  fits(maxMs: number): Promise<void> {
    if (this.excess() === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, maxMs);
      timer.unref();
      this.#waiting.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** A budget handle for one shard's outbox. */
  share(): BudgetShare {
    let bound: BudgetMember | undefined;
    const budget: ClaimBudget = {
      bind: (member) => {
        bound = member;
        this.#members.add(member);
      },
      allows: (namespace) => this.claimed(namespace) < this.#ceiling,
      freed: (namespace) => {
        for (const m of [...this.#members]) if (m !== bound) m.pump(namespace);
        this.#settle();
      },
    };
    return {
      budget,
      leave: () => {
        if (bound === undefined || !this.#members.delete(bound)) return;
        // Its claims no longer count: the others may claim in their place.
        for (const m of [...this.#members]) m.pump();
        this.#settle();
      },
    };
  }

  #namespaces(): Set<string> {
    const all = new Set<string>();
    for (const m of this.#members) for (const namespace of m.namespaces()) all.add(namespace);
    return all;
  }

  /** Gives back, namespace by namespace, the waiting claims past the share. */
  #shrink(): void {
    for (const namespace of this.#namespaces()) {
      for (const m of this.#members) {
        const over = this.claimed(namespace) - this.#ceiling;
        if (over <= 0) break;
        m.giveBack(namespace, over);
      }
    }
    this.#settle();
  }

  #settle(): void {
    if (this.#waiting.length === 0 || this.excess() > 0) return;
    for (const done of this.#waiting.splice(0)) done();
  }
}
