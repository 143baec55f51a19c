/**
 * The node's share of each namespace's claim ceiling in a cluster (spec, Limits 5): a node
 * owning `s` of `S` shards claims at most `ceil(quota × s / S)` outbox rows per namespace,
 * recomputed whenever its ownership changes. Each owned shard has its own engine and outbox;
 * they all draw on this one budget, so the bound holds for their sum. When a claim is freed,
 * or the share grows, the other outboxes are asked to claim what is now allowed.
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

  constructor(quota: number, total: number) {
    this.#quota = quota;
    this.#total = total;
    this.#ceiling = nodeShare(quota, 0, total);
  }

  /** This node's ceiling per namespace now. */
  get ceiling(): number {
    return this.#ceiling;
  }

  /** Ownership changed: the share follows, and a larger one is used at once. */
  owned(shards: number): void {
    const before = this.#ceiling;
    this.#ceiling = nodeShare(this.#quota, Math.min(shards, this.#total), this.#total);
    if (this.#ceiling > before) for (const m of [...this.#members]) m.pump();
  }

  /** Rows claimed now in `namespace` over every shard of this node. */
  claimed(namespace: string): number {
    let n = 0;
    for (const m of this.#members) n += m.claimed(namespace);
    return n;
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
      },
    };
    return {
      budget,
      leave: () => {
        if (bound === undefined || !this.#members.delete(bound)) return;
        // Its claims no longer count: the others may claim in their place.
        for (const m of [...this.#members]) m.pump();
      },
    };
  }
}
