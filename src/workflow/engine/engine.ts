/**
 * The engine: it keeps every running run's state in memory, feeds new events (run starts,
 * activity results, timeouts, fired timers, cancels) through the decision core, and commits
 * the events of every run that advanced in one store transaction (group commit). It acts at
 * once (offers attempts to the matcher, arms timers, sends cancels) but acknowledges a
 * recorded result to its worker, and reports a finished run, only once the commit holding it
 * is durable (see speculation.ts for why acting early is safe).
 *
 * This file is the engine's public face (start, cancel, pause, resume, signal, recover,
 * close); each role lives in its own module over the shared `EngineCore` (core.ts):
 *   - group-commit.ts: inbox -> tick (apply, decide, effects) -> one commit -> acknowledge;
 *   - attempts.ts: dispatch, offers, timeouts, heartbeats, results from the matcher;
 *   - run-tree.ts: run ends, child runs, cancel cascades;
 *   - recovery.ts: rebuilding running runs from history after a restart;
 *   - dispatcher.ts: the port the matcher implements (the engine never imports it).
 */

import type { WorkflowDefinition } from "../definitions/types.ts";
import { engineFault } from "../errors.ts";
import { effect, handOff, matcherEvents, onTimer } from "./attempts.ts";
import { EngineCore, type EngineOptions, stoppedError } from "./core.ts";
import type { Dispatcher, MatcherEvents } from "./dispatcher.ts";
import { fatal, recordOutbox, stop, tick } from "./group-commit.ts";
import type { HistoryEvent, RunStatus } from "./history.ts";
import { enqueue } from "./inbox.ts";
import { type RecoverOptions, recover } from "./recovery.ts";
import { applicable, newRun, recorded } from "./run.ts";
import type { RunState } from "./state.ts";

export type { EngineOptions } from "./core.ts";

/**
 * What a control (cancel, pause, resume, signal) did. `applied` is false when it changed
 * nothing: the run is not held here (`status` undefined: ended, or unknown to this engine, so
 * the API layer reads its stored status for the no-op answer), or it is already in the asked-for
 * state (`status` says which). `status` is read once the control is durable, so a resumed or
 * signalled run may already show a later status.
 */
export interface ControlResult {
  readonly runId: string;
  readonly applied: boolean;
  readonly status: RunStatus | undefined;
}

export interface StartRun {
  readonly runId: string;
  readonly workflowId: string;
  readonly namespace: string;
  readonly definition: WorkflowDefinition;
  readonly inputJson: string;
  /** A run deadline given at start (ms from the start); overrides the definition's. */
  readonly deadlineMs?: number;
}

export class Engine {
  readonly #core: EngineCore;
  /** Pass to the matcher: results and heartbeats flow into the engine. */
  readonly matcherEvents: MatcherEvents;

  constructor(options: EngineOptions) {
    const core: EngineCore = new EngineCore(options, {
      onTimer: (payload) => onTimer(core, payload),
      effect: (run, command) => effect(core, run, command),
      handOff: (entry) => handOff(core, entry),
      recordOutbox: (run, write) => recordOutbox(core, run, write),
      tick: () => {
        tick(core).catch((error: unknown) => fatal(core, error));
      },
    });
    this.#core = core;
    this.matcherEvents = matcherEvents(core);
  }

  /** Outbox rows claimed now in a namespace (0 when the outbox is disabled). */
  claimed(namespace: string): number {
    return this.#core.outbox?.claimed(namespace) ?? 0;
  }

  /** The highest claimed-row count seen in any namespace since start. */
  get maxClaimed(): number {
    return this.#core.outbox?.maxClaimed ?? 0;
  }

  /** Outbox rows claimed and waiting per namespace; empty when the outbox is disabled. */
  outboxLanes(): Iterable<{ namespace: string; claimed: number; waiting: number }> {
    return this.#core.outbox?.lanes() ?? [];
  }

  /** This node's claim ceiling per namespace; 0 when the outbox is disabled. */
  get outboxCeiling(): number {
    return this.#core.outbox?.ceiling ?? 0;
  }

  /** Runs held in memory by status (a walk over them: for scrapes, not hot paths). */
  statusCounts(): Map<RunStatus, number> {
    const counts = new Map<RunStatus, number>();
    for (const run of this.#core.runs.values()) {
      const status = run.state.status;
      counts.set(status, (counts.get(status) ?? 0) + 1);
    }
    return counts;
  }

  /** Connects the matcher (created with `matcherEvents`). */
  attach(dispatcher: Dispatcher): void {
    this.#core.dispatcher = dispatcher;
  }

  /** Runs held in memory (every run that has not ended). */
  get running(): number {
    return this.#core.runs.size;
  }

  /** The in-memory state of a running run. */
  state(runId: string): RunState | undefined {
    return this.#core.runs.get(runId)?.state;
  }

  /**
   * Rebuilds every running run from the store; returns how many. Call before serving. After a
   * takeover (`takeover`: another node served these runs) attempts that may have run there
   * are renumbered (recovery.ts).
   */
  recover(options?: RecoverOptions): Promise<number> {
    return recover(this.#core, options);
  }

  /** Starts a run; resolves once its start (and first decisions) are durable. */
  start(request: StartRun): Promise<void> {
    const core = this.#core;
    if (core.stopped) return Promise.reject(stoppedError());
    if (core.runs.has(request.runId)) {
      return Promise.reject(engineFault("run_exists", `run ${request.runId} already exists`));
    }
    const run = newRun(
      {
        runId: request.runId,
        workflowId: request.workflowId,
        namespace: request.namespace,
        definitionVersion: request.definition.version,
      },
      request.definition,
    );
    core.runs.set(request.runId, run);
    return enqueue(core, run, {
      type: "RunStarted",
      at: core.now(),
      workflow_id: request.workflowId,
      definition_version: request.definition.version,
      input_json: request.inputJson,
      ...(request.deadlineMs === undefined ? {} : { deadline_ms: request.deadlineMs }),
    });
  }

  /**
   * Cancels a Running or Paused run (reason `requested`): it records RunCancelled, its
   * in-flight attempts get cancel frames, and every live descendant is cancelled in turn, each
   * in its own history. Resolves once the run's cancellation is durable.
   */
  cancel(runId: string): Promise<ControlResult> {
    return this.#control(runId, {
      type: "RunCancelled",
      at: this.#core.now(),
      reason: "requested",
    });
  }

  /** Pauses a Running run: it dispatches nothing new; work in flight finishes and is recorded. */
  pause(runId: string): Promise<ControlResult> {
    return this.#control(runId, { type: "RunPaused", at: this.#core.now() });
  }

  /** Resumes a Paused run: what it held back is dispatched and it decides again. */
  resume(runId: string): Promise<ControlResult> {
    return this.#control(runId, { type: "RunResumed", at: this.#core.now() });
  }

  /**
   * Records a signal in a Running or Paused run's history. A `wait` step for its name takes
   * it, now or later (a signal that arrives before the wait waits for it).
   */
  signal(runId: string, signal: string, payloadJson: string): Promise<ControlResult> {
    return this.#control(runId, {
      type: "SignalReceived",
      at: this.#core.now(),
      signal,
      payload_json: payloadJson,
    });
  }

  async #control(runId: string, event: HistoryEvent): Promise<ControlResult> {
    const run = this.#core.runs.get(runId);
    if (run === undefined) return { runId, applied: false, status: undefined };
    if (!applicable(run.state, event)) {
      return { runId, applied: false, status: run.state.status };
    }
    const before = run.state.length;
    await enqueue(this.#core, run, event);
    // The event may have been overtaken in the inbox (the run ended first).
    const applied = run.state.length > before && recorded(run, event);
    return { runId, applied, status: run.state.status };
  }
  /** Resolves when no tick is running or pending. */
  idle(): Promise<void> {
    const core = this.#core;
    if (!core.ticking && !core.scheduled && !core.committing && core.pending === undefined) {
      return Promise.resolve();
    }
    return new Promise((done) => core.idle.push(done));
  }

  /**
   * Stops the engine. Inputs not yet committed are refused (their results stay with their
   * workers, which send them again to the next server); a commit in flight still lands.
   */
  close(): void {
    stop(this.#core);
  }

  /** Stops the engine (as `close`) and resolves once the commit in flight has settled. */
  async closeLanded(): Promise<void> {
    stop(this.#core);
    await this.#core.landing;
  }

  /**
   * Takes back every outbox claim whose attempt still waits for a worker (the shard is being
   * handed over: another node will claim its rows); returns how many.
   */
  giveBackClaims(): number {
    const outbox = this.#core.outbox;
    if (outbox === undefined) return 0;
    let n = 0;
    for (const lane of [...outbox.lanes()]) {
      n += outbox.giveBack(lane.namespace, Number.POSITIVE_INFINITY);
    }
    return n;
  }
}
