/**
 * The state one engine's roles share: the runs held in memory, the timer heap, the commit
 * pipeline's flags and the pending batch, the dispatcher and the outbox. The roles are
 * functions over it in their own modules (group-commit.ts, attempts.ts, run-tree.ts,
 * recovery.ts); engine.ts builds it and is the only public face.
 */

import type { SkeinError } from "../../common/errors.ts";
import { type Logger, silentLogger } from "../../common/log.ts";
import type { AttemptRef } from "../../protocol/attempt.ts";
import type { WorkflowDefinition } from "../definitions/types.ts";
import { workflowError } from "../errors.ts";
import type { Command } from "./commands.ts";
import type { Dispatcher } from "./dispatcher.ts";
import { Outbox, type OutboxEntry, type OutboxOptions } from "./outbox.ts";
import type { InboxItem, Run } from "./run.ts";
import { SpeculationGate } from "./speculation.ts";
import type { RunState } from "./state.ts";
import type { EngineStore, OutboxWrite, RunAppend } from "./store.ts";
import { TimerQueue } from "./timers.ts";

export interface EngineOptions {
  readonly store: EngineStore;
  /** The definition a run pinned, for recovery. */
  readonly definitions: (namespace: string, version: string) => Promise<WorkflowDefinition>;
  readonly now?: () => number;
  readonly logger?: Logger;
  /** Called when a commit fails; the engine stops, and the process should restart from history. */
  readonly onFatal?: (error: unknown) => void;
  /**
   * How long an attempt whose worker disconnected may wait for that worker to re-attach it
   * before it is timed out as `worker_lost` and retried (default 10 s).
   */
  readonly reattachGraceMs?: number;
  /** Called when a run is taken out of the engine because it cannot be advanced. */
  readonly onRunError?: (runId: string, error: unknown) => void;
  /** Called once a run's end (Completed, Failed, Cancelled) is durable. */
  readonly onRunEnded?: (runId: string, state: RunState) => void;
  /**
   * The outbox for `parallel` and `collect` members (`outbox.enabled`,
   * `namespaces.max_in_flight_activities`); default disabled: members go out like calls.
   */
  readonly outbox?: OutboxOptions;
  /**
   * Resolves a `child` step's workflow in the parent's namespace: the pinned `version`, or the
   * latest registered when undefined. A refusal (a SkeinError) fails the parent run with its code.
   */
  readonly childDefinition?: (
    namespace: string,
    workflow: string,
    version: string | undefined,
  ) => Promise<WorkflowDefinition>;
}

export interface PendingCommit {
  /** Commits are numbered in the order they are made (and land). */
  readonly generation: number;
  readonly batch: Map<string, RunAppend>;
  readonly waiters: InboxItem[];
  readonly ended: Run[];
  /** Outbox row writes by run, merged into the batch when it is committed. */
  readonly outbox: Map<string, { run: Run; writes: OutboxWrite[] }>;
}

export type TimerPayload =
  | { readonly kind: "dispatch"; readonly runId: string; readonly ref: AttemptRef }
  | { readonly kind: "start_to_close"; readonly runId: string; readonly ref: AttemptRef }
  | { readonly kind: "worker_lost"; readonly runId: string; readonly ref: AttemptRef }
  | {
      readonly kind: "heartbeat";
      readonly runId: string;
      readonly ref: AttemptRef;
      readonly ms: number;
    }
  | { readonly kind: "run"; readonly runId: string; readonly timerId: string };

/**
 * The timer queue's key spaces (timers.ts): an attempt's timers are keyed by its attempt key
 * in a space per kind, run timers by `run:<run id>:<timer id>` in the first.
 */
export const TIMERS = {
  run: 0,
  dispatch: 1,
  startToClose: 2,
  heartbeat: 3,
  workerLost: 4,
} as const;

/** What the roles hand the core at construction (the core imports none of them). */
export interface CoreHooks {
  readonly onTimer: (payload: TimerPayload) => void;
  readonly effect: (run: Run, command: Command) => void;
  readonly handOff: (entry: OutboxEntry<Run>) => "placed" | "queued" | "dropped";
  readonly recordOutbox: (run: Run, write: OutboxWrite) => void;
  /** Runs one tick over the dirty runs (group-commit.ts); scheduled by the inbox. */
  readonly tick: () => void;
}

export class EngineCore {
  readonly opts: EngineOptions;
  readonly log: Logger;
  readonly now: () => number;
  readonly runs = new Map<string, Run>();
  /**
   * Runs with work waiting for the next tick. A tick takes the set and leaves a fresh one:
   * `clear()` on a set that has lived long enough to be in V8's old generation allocates
   * its new table there (about 40 bytes per run added, measured), which only a full mark
   * and sweep reclaims; a new set's table is young and dies in a scavenge.
   */
  dirty = new Set<Run>();
  readonly timers: TimerQueue<TimerPayload>;
  /** Last heartbeat per attempt key. */
  readonly beats = new Map<string, number>();
  readonly reattachGraceMs: number;
  /** Set while `recover()` loads runs. */
  recovering: Promise<void> | undefined;
  dispatcher: Dispatcher | undefined;
  ticking = false;
  /** The number of the last commit made (see speculation.ts). */
  generation = 0;
  readonly speculation: SpeculationGate<Run>;
  scheduled = false;
  /** The scheduled tick, made once (markDirty hands it to setImmediate on the hot path). */
  readonly tickNow: () => void;
  committing = false;
  /** The commit in flight, settled either way (a handover waits for it to land). */
  landing: Promise<void> | undefined;
  /** Processed events (and their waiters) waiting for the commit in flight to finish. */
  pending: PendingCommit | undefined;
  stopped = false;
  /** Resolvers waiting for the engine to be idle (tests, shutdown). */
  idle: (() => void)[] = [];
  /** The member dispatcher; undefined when the outbox is disabled. */
  readonly outbox: Outbox<Run> | undefined;

  constructor(options: EngineOptions, hooks: CoreHooks) {
    this.opts = options;
    this.log = options.logger ?? silentLogger();
    this.now = options.now ?? Date.now;
    this.reattachGraceMs = options.reattachGraceMs ?? 10_000;
    this.tickNow = () => {
      this.scheduled = false;
      hooks.tick();
    };
    this.timers = new TimerQueue((_, payload) => hooks.onTimer(payload), this.now);
    this.speculation = new SpeculationGate<Run>((run, commands) => {
      for (const command of commands) hooks.effect(run, command);
    });
    this.outbox =
      options.outbox?.enabled === true
        ? new Outbox<Run>(options.outbox, {
            ready: (e) => e.owner.state.status !== "Paused",
            handOff: (e) => hooks.handOff(e),
            withdraw: (e) =>
              this.dispatcher?.withdraw?.({
                run_id: e.runId,
                activity_id: e.activityId,
                attempt: e.attempt,
              }) ?? false,
            record: (e, state) =>
              hooks.recordOutbox(e.owner, { activityId: e.activityId, attempt: e.attempt, state }),
          })
        : undefined;
  }
}

export function stoppedError(): SkeinError {
  return workflowError("engine_stopped", "the engine stopped before recording this");
}
