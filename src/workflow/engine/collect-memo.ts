/**
 * What `decide` remembers about a run's collects (and its finished steps: DonePrefix) between calls, so a collect of n items
 * costs O(members that changed) per decision instead of O(n): without it, every result of a
 * 10,000-item collect re-walked all 10,000 members (quadratic: 50,000 members took a
 * minute). For each collect instance the memo keeps its items (evaluated once), the values
 * of members that are done (a done member never changes), and the members touched since
 * the last walk: those whose activity, timer or child got a result. Only those are walked
 * again; the others are known to be pending with nothing new to decide.
 *
 * The memo is derived data, never history: a restart starts with none, and the first
 * decision walks everything, as a call to `decide` without a memo always does. A walk with
 * the memo returns exactly the commands a full walk would (a test compares them over random
 * runs). Collects whose body has a `wait` step are always walked whole, because signals are
 * matched across members in walk order.
 */

import type { Step } from "../definitions/types.ts";
import type { HistoryEvent } from "./history.ts";
import type { RunState } from "./state.ts";

/** One collect instance: `values[i]` is set once member i is done. */
export interface CollectMemo {
  readonly items: readonly unknown[];
  readonly values: unknown[];
  readonly isDone: boolean[];
  done: number;
  /** Members touched since the last walk. */
  readonly touched: Set<number>;
}

/** A member position in a step instance key: `c[3]/` of `c[3]/d`. */
const MEMBER = /\[(\d+)\]\//g;

/**
 * The run's top-level steps finished so far, from the first: a decision resumes after them
 * instead of visiting each again (O(1) per step of a sequence, not O(steps before it)). A
 * finished step stays finished whatever history adds (a completed activity, a fired timer,
 * an ended child, a taken signal: later signals come later in the list), so the prefix only
 * grows. Waits among them took `consumed` (history positions), which later waits must skip.
 */
export interface DonePrefix {
  /** Their ids and outcomes, in step order, as decide.ts keeps outcomes. */
  readonly outcomes: [id: string, outcome: unknown][];
  /** Signals the waits among them took. */
  consumed: readonly number[];
}

export class CollectMemos {
  readonly #byKey = new Map<string, CollectMemo>();
  /** Derived like the collects' memos: a restart starts empty and walks from the first step. */
  readonly prefix: DonePrefix = { outcomes: [], consumed: [] };

  get(key: string): CollectMemo | undefined {
    return this.#byKey.get(key);
  }

  set(key: string, memo: CollectMemo): void {
    this.#byKey.set(key, memo);
  }

  /**
   * Records what an event, just applied to `state`, touches: a result of an activity, a
   * fired timer or an ended child marks its member dirty in every collect it is nested in.
   * Events the run's own decisions produce (scheduling, starting) touch nothing: the walk
   * that produced them already saw those members.
   */
  touch(state: RunState, event: HistoryEvent): void {
    if (this.#byKey.size === 0) return;
    const key = stepKeyOf(state, event);
    if (key === undefined) return;
    for (const m of key.matchAll(MEMBER)) {
      this.#byKey.get(key.slice(0, m.index))?.touched.add(Number(m[1]));
    }
  }
}

function stepKeyOf(state: RunState, event: HistoryEvent): string | undefined {
  switch (event.type) {
    case "ActivityCompleted":
    case "ActivityFailed":
    case "ActivityTimedOut":
      return state.activities.get(event.activity_id)?.stepId;
    case "TimerFired": {
      const colon = event.timer_id.indexOf(":");
      return colon < 0 ? undefined : event.timer_id.slice(colon + 1);
    }
    case "ChildEnded":
      return state.stepOfChild.get(event.child_run_id);
    default:
      return undefined;
  }
}

const waits = new WeakMap<Step, boolean>();

/** Whether a `wait` step is anywhere in `step` (such collects are always walked whole). */
export function hasWait(step: Step): boolean {
  let found = waits.get(step);
  if (found === undefined) {
    found =
      step.kind === "wait" ||
      (step.kind === "parallel" && step.branches.some(hasWait)) ||
      (step.kind === "collect" && hasWait(step.body));
    waits.set(step, found);
  }
  return found;
}
