/**
 * Stepped node sweeps: freeing unreachable nodes (gc.ts) one bounded step per turn of the
 * event loop, so the socket server answers requests in between. One stepped sweep runs at a
 * time; a sweep asked for while one runs starts after it (the running one read its roots
 * before the new garbage existed), and the requests waiting then share it. A store that
 * closes mid-sweep abandons it and refuses its waiters with `internal_error`.
 */

import { storeError } from "../errors.ts";
import type { StoreContext } from "./context.ts";
import { NodeSweep, type SweepResult } from "./gc.ts";

/** Work in one step of a stepped sweep: nodes loaded while marking, keys examined after. */
export const SWEEP_STEP_WORK = 256;

interface Waiter {
  readonly resolve: (result: SweepResult) => void;
  readonly reject: (error: unknown) => void;
}

/** What the sweeps read of the store that runs them. */
export interface SweepHost {
  closed(): boolean;
  /** Work per step (the store's `sweepStepWork`, which tests lower). */
  stepWork(): number;
}

export class SteppedSweeps {
  readonly #ctx: StoreContext;
  readonly #host: SweepHost;
  #sweeping = false;
  /** Waiting for the sweep after the running one. */
  #next: Waiter[] = [];

  constructor(ctx: StoreContext, host: SweepHost) {
    this.#ctx = ctx;
    this.#host = host;
  }

  /** Resolves with the figures of a sweep that started after this call. */
  run(): Promise<SweepResult> {
    return new Promise((resolve, reject) => {
      if (this.#host.closed()) reject(storeError("internal_error", "the store is closed"));
      else if (this.#sweeping) this.#next.push({ resolve, reject });
      else this.#run([{ resolve, reject }]);
    });
  }

  #run(waiters: Waiter[]): void {
    const finish = (outcome: { result: SweepResult } | { error: unknown }) => {
      this.#sweeping = false;
      for (const waiter of waiters) {
        if ("result" in outcome) waiter.resolve(outcome.result);
        else waiter.reject(outcome.error);
      }
      const next = this.#next.splice(0);
      if (next.length > 0) this.#run(next);
    };
    const failed = (error: unknown) =>
      storeError(
        "internal_error",
        `freeing nodes failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    if (this.#host.closed()) {
      finish({ error: storeError("internal_error", "the store is closed") });
      return;
    }
    let sweep: NodeSweep;
    try {
      sweep = new NodeSweep(this.#ctx);
    } catch (error) {
      finish({ error: failed(error) });
      return;
    }
    this.#sweeping = true;
    const tick = () => {
      if (this.#host.closed()) {
        sweep.abandon();
        finish({ error: storeError("internal_error", "the store closed during a sweep") });
        return;
      }
      try {
        if (!sweep.step(this.#host.stepWork())) {
          setImmediate(tick);
          return;
        }
      } catch (error) {
        sweep.abandon();
        finish({ error: failed(error) });
        return;
      }
      finish({ result: sweep.result });
    };
    setImmediate(tick);
  }
}
