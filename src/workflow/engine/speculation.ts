/**
 * How far a run's effects may run ahead of its durable history. The engine sends a
 * decision's effects (dispatches, timers, cancels) before the commit holding its events
 * lands. That is safe because nothing is acknowledged before its commit and commits land in
 * order: a crash only repeats work that history does not show yet (the same decisions are
 * made again from history), and a result for an attempt whose scheduling was lost is never
 * recorded. So at C = 1 a worker runs the next step while the commit that scheduled it
 * syncs, and each commit carries every step that finished meanwhile.
 *
 * The lead is bounded: a run with `SPECULATION_DEPTH` decisions whose effects went out and
 * whose commits have not landed holds its next decisions' effects until one lands, so a
 * stalled store stops runs within a few steps instead of letting them race ahead of their
 * history. Commits are numbered (generations) in the order they are made and land.
 */

import type { Command } from "./commands.ts";

/** How many of a run's decisions may have their effects out before they are durable. */
export const SPECULATION_DEPTH = 16;

interface Lead {
  /** The commit of each decision whose effects went out and that has not landed, oldest first. */
  readonly ahead: number[];
  /** Decisions whose effects wait, in order, each with the commit of its events. */
  readonly waiting: { readonly commands: readonly Command[]; readonly generation: number }[];
}

export class SpeculationGate<Run extends object> {
  readonly #effect: (run: Run, commands: readonly Command[]) => void;
  readonly #depth: number;
  /** Per run; a run that is dropped takes its entry with it. */
  readonly #leads = new WeakMap<Run, Lead>();
  /** Runs with decisions waiting. */
  readonly #held = new Set<Run>();
  #durable = 0;

  constructor(effect: (run: Run, commands: readonly Command[]) => void, depth = SPECULATION_DEPTH) {
    this.#effect = effect;
    this.#depth = depth;
  }

  /** A decision whose events are in commit `generation`: its effects go out now, or wait. */
  release(run: Run, commands: readonly Command[], generation: number): void {
    const lead = this.#leadOf(run);
    this.#prune(lead);
    if (lead.waiting.length > 0 || lead.ahead.length >= this.#depth) {
      lead.waiting.push({ commands, generation });
      this.#held.add(run);
      return;
    }
    lead.ahead.push(generation);
    this.#effect(run, commands);
  }

  /**
   * Commit `generation` landed (and every one before it): decisions that waited for it go
   * out, in order. Returns whether any did.
   */
  landed(generation: number): boolean {
    this.#durable = generation;
    let released = false;
    for (const run of this.#held) {
      const lead = this.#leadOf(run);
      this.#prune(lead);
      while (lead.waiting.length > 0 && lead.ahead.length < this.#depth) {
        const { commands, generation: of } = lead.waiting.shift()!;
        lead.ahead.push(of);
        this.#effect(run, commands);
        released = true;
      }
      if (lead.waiting.length === 0) this.#held.delete(run);
    }
    return released;
  }

  /** Drops what waits for `run` (it was taken out of the engine). */
  forget(run: Run): void {
    this.#leads.delete(run);
    this.#held.delete(run);
  }

  #leadOf(run: Run): Lead {
    let lead = this.#leads.get(run);
    if (lead === undefined) {
      lead = { ahead: [], waiting: [] };
      this.#leads.set(run, lead);
    }
    return lead;
  }

  /** Forgets the decisions whose commits have landed. */
  #prune(lead: Lead): void {
    let landed = 0;
    while (landed < lead.ahead.length && lead.ahead[landed]! <= this.#durable) landed++;
    if (landed > 0) lead.ahead.splice(0, landed);
  }
}
