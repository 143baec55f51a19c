/**
 * The engine loop: it keeps every running run's state in memory, feeds new events (run
 * starts, activity results, timeouts, fired timers, cancels) through the decision core, and
 * commits the events of every run that advanced in one store transaction (group commit).
 * It acts at once (offers attempts to the matcher, arms timers, sends cancels) but
 * acknowledges a recorded result to its worker, and reports a finished run, only once the
 * commit holding it is durable (see `#tick` for why acting early is safe). Nothing here
 * polls: inputs schedule a tick, and timers live in one heap with one OS timer.
 *
 * Inputs land in a run's inbox and are applied only inside a tick, so a run's state changes
 * in one place, between awaits. A result that is no longer wanted (a resend, a late attempt
 * after a timeout, a run that ended) is dropped there and never reaches history: each
 * activity completes at most once. After a restart `recover()` rebuilds each running run
 * from its history, re-offers its in-flight attempts and re-arms its timers.
 *
 * Tick:  inbox events applied --> decide per dirty run --> effects --> (pipeline) one commit --> acks
 */

import { SkeinError } from "../../common/errors.ts";
import { type Logger, silentLogger } from "../../common/log.ts";
import type { WorkflowDefinition } from "../definitions/types.ts";
import type { MatcherEvents, OfferOutcome, TaskOffer } from "../rpc/matcher.ts";
import { type AttemptRef, attemptKey } from "../rpc/protocol.ts";
import { type Command, eventOf } from "./commands.ts";
import { decide } from "./decide.ts";
import type { HistoryEvent } from "./history.ts";
import {
  acceptsResult,
  apply,
  EMPTY_RUN,
  inFlight,
  pendingTimers,
  type RunState,
  replay,
} from "./state.ts";
import type { EngineStore, RunAppend, RunIdentity } from "./store.ts";
import { TimerQueue } from "./timers.ts";

function stoppedError(): SkeinError {
  return new SkeinError("engine_stopped", "the engine stopped before recording this", {
    status: 503,
  });
}

/** The matcher operations the engine uses; `Matcher` satisfies it. */
export interface Dispatcher {
  offer(task: TaskOffer): OfferOutcome;
  /** Gives up an attempt: withdrawn if waiting, told to stop if running. */
  release(ref: AttemptRef, reason: string): void;
  /** Writes frames queued for workers now, rather than at the end of the turn. */
  flush?(): void;
}

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
}

export interface StartRun {
  readonly runId: string;
  readonly workflowId: string;
  readonly namespace: string;
  readonly definition: WorkflowDefinition;
  readonly inputJson: string;
}

interface InboxItem {
  readonly event: HistoryEvent;
  readonly done?: () => void;
  readonly fail?: (error: unknown) => void;
}

interface PendingCommit {
  readonly batch: Map<string, RunAppend>;
  readonly waiters: InboxItem[];
  readonly ended: Run[];
}

interface Advanced {
  readonly events: HistoryEvent[];
  readonly commands: readonly Command[];
  readonly waiters: InboxItem[];
}

interface Run {
  readonly id: RunIdentity;
  readonly definition: WorkflowDefinition;
  state: RunState;
  inbox: InboxItem[];
}

type TimerPayload =
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

export class Engine {
  readonly #opts: EngineOptions;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #runs = new Map<string, Run>();
  readonly #dirty = new Set<Run>();
  readonly #timers: TimerQueue<TimerPayload>;
  /** Last heartbeat per attempt key. */
  readonly #beats = new Map<string, number>();
  readonly #reattachGraceMs: number;
  /** Set while `recover()` loads runs. */
  #recovering: Promise<void> | undefined;
  #dispatcher: Dispatcher | undefined;
  #ticking = false;
  #scheduled = false;
  #committing = false;
  /** Processed events (and their waiters) waiting for the commit in flight to finish. */
  #pending: PendingCommit | undefined;
  #stopped = false;
  /** Resolvers waiting for the engine to be idle (tests, shutdown). */
  #idle: (() => void)[] = [];

  /** Pass to the matcher: results and heartbeats flow into the engine. */
  readonly matcherEvents: MatcherEvents = {
    completed: (ref, outputJson) =>
      this.#result(ref, (at) => ({
        type: "ActivityCompleted",
        at,
        activity_id: ref.activity_id,
        attempt: ref.attempt,
        output_json: outputJson,
      })),
    failed: (ref, failure) =>
      this.#result(ref, (at) => ({
        type: "ActivityFailed",
        at,
        activity_id: ref.activity_id,
        attempt: ref.attempt,
        code: failure.code,
        message: failure.message,
        non_retryable: failure.nonRetryable,
      })),
    heartbeat: (ref) => {
      this.#beats.set(attemptKey(ref), this.#now());
    },
    // A worker's stream ended while it held these attempts: it may come back and re-attach
    // them; if it does not within the grace, they are lost and retried.
    detached: (refs) => {
      const at = this.#now() + this.#reattachGraceMs;
      for (const ref of refs) {
        if (!this.#runs.has(ref.run_id)) continue;
        this.#timers.set(`lost:${attemptKey(ref)}`, at, {
          kind: "worker_lost",
          runId: ref.run_id,
          ref,
        });
      }
    },
    attached: (refs) => {
      for (const ref of refs) this.#timers.delete(`lost:${attemptKey(ref)}`);
    },
  };

  constructor(options: EngineOptions) {
    this.#opts = options;
    this.#log = options.logger ?? silentLogger();
    this.#now = options.now ?? Date.now;
    this.#reattachGraceMs = options.reattachGraceMs ?? 10_000;
    this.#timers = new TimerQueue((_, payload) => this.#onTimer(payload), this.#now);
  }

  /** Connects the matcher (created with `matcherEvents`). */
  attach(dispatcher: Dispatcher): void {
    this.#dispatcher = dispatcher;
  }

  /** Runs held in memory (every run that has not ended). */
  get running(): number {
    return this.#runs.size;
  }

  /** The in-memory state of a running run. */
  state(runId: string): RunState | undefined {
    return this.#runs.get(runId)?.state;
  }

  /** Rebuilds every running run from the store; returns how many. Call before serving. */
  recover(): Promise<number> {
    const recovery = this.#recover();
    // Results that arrive while runs are being loaded wait for them (see #result).
    const gate = recovery.then(
      () => undefined,
      () => undefined,
    );
    this.#recovering = gate;
    void gate.then(() => {
      if (this.#recovering === gate) this.#recovering = undefined;
    });
    return recovery;
  }

  async #recover(): Promise<number> {
    const stored = await this.#opts.store.loadRunning();
    const now = this.#now();
    for (const s of stored) {
      let run: Run;
      try {
        run = {
          id: {
            runId: s.runId,
            workflowId: s.workflowId,
            namespace: s.namespace,
            definitionVersion: s.definitionVersion,
          },
          definition: await this.#opts.definitions(s.namespace, s.definitionVersion),
          state: replay(s.history),
          inbox: [],
        };
      } catch (error) {
        this.#log.error({ err: error, run: s.runId }, "run not recovered");
        this.#opts.onRunError?.(s.runId, error);
        continue;
      }
      this.#runs.set(s.runId, run);
      for (const scheduled of inFlight(run.state)) {
        const ref = {
          run_id: s.runId,
          activity_id: scheduled.activity_id,
          attempt: scheduled.attempt,
        };
        if (scheduled.dispatch_at <= now) this.#dispatch(run, ref);
        else
          this.#timers.set(`dispatch:${attemptKey(ref)}`, scheduled.dispatch_at, {
            kind: "dispatch",
            runId: s.runId,
            ref,
          });
      }
      for (const t of pendingTimers(run.state)) {
        this.#timers.set(`run:${s.runId}:${t.timerId}`, t.fireAt, {
          kind: "run",
          runId: s.runId,
          timerId: t.timerId,
        });
      }
      // A crash between a result's commit and its decision cannot happen (they share a tick),
      // but deciding again is harmless: decide is idempotent on a waiting run.
      this.#markDirty(run);
    }
    this.#log.info({ runs: stored.length }, "engine recovered running runs");
    return stored.length;
  }

  /** Starts a run; resolves once its start (and first decisions) are durable. */
  start(request: StartRun): Promise<void> {
    if (this.#stopped) return Promise.reject(stoppedError());
    if (this.#runs.has(request.runId)) {
      return Promise.reject(
        new SkeinError("run_exists", `run ${request.runId} already exists`, { status: 409 }),
      );
    }
    const run: Run = {
      id: {
        runId: request.runId,
        workflowId: request.workflowId,
        namespace: request.namespace,
        definitionVersion: request.definition.version,
      },
      definition: request.definition,
      state: EMPTY_RUN,
      inbox: [],
    };
    this.#runs.set(request.runId, run);
    return this.#enqueue(run, {
      type: "RunStarted",
      at: this.#now(),
      workflow_id: request.workflowId,
      definition_version: request.definition.version,
      input_json: request.inputJson,
    });
  }

  /** Cancels a running run (reason `requested`); resolves once recorded. */
  cancel(runId: string): Promise<void> {
    const run = this.#runs.get(runId);
    if (run === undefined) return Promise.resolve();
    return this.#enqueue(run, { type: "RunCancelled", at: this.#now(), reason: "requested" });
  }

  /** Resolves when no tick is running or pending. */
  idle(): Promise<void> {
    if (!this.#ticking && !this.#scheduled && !this.#committing && this.#pending === undefined) {
      return Promise.resolve();
    }
    return new Promise((done) => this.#idle.push(done));
  }

  /**
   * Stops the engine. Inputs not yet committed are refused (their results stay with their
   * workers, which send them again to the next server); a commit in flight still lands.
   */
  close(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#timers.close();
    const stopped = stoppedError();
    for (const w of this.#pending?.waiters ?? []) w.fail?.(stopped);
    this.#pending = undefined;
    for (const run of this.#runs.values()) {
      for (const item of run.inbox) item.fail?.(stopped);
      run.inbox = [];
    }
  }

  #result(ref: AttemptRef, event: (at: number) => HistoryEvent): Promise<void> | undefined {
    const run = this.#runs.get(ref.run_id);
    if (run === undefined && this.#recovering !== undefined) {
      // A worker re-attached faster than the runs were loaded: ask again once they are.
      return this.#recovering.then(() => this.#result(ref, event));
    }
    // Not running here (ended, or unknown): nothing to record; the matcher acknowledges.
    if (run === undefined || !acceptsResult(run.state, ref.activity_id, ref.attempt))
      return undefined;
    this.#forgetAttempt(attemptKey(ref));
    return this.#enqueue(run, event(this.#now()));
  }

  /** For the engine's own events (timers, timeouts): nobody waits, so a refusal is dropped. */
  #enqueueInternal(run: Run, event: HistoryEvent): void {
    this.#enqueue(run, event).catch(() => {});
  }

  #enqueue(run: Run, event: HistoryEvent): Promise<void> {
    if (this.#stopped) return Promise.reject(stoppedError());
    return new Promise((done, fail) => {
      run.inbox.push({ event, done, fail });
      this.#markDirty(run);
    });
  }

  #markDirty(run: Run): void {
    this.#dirty.add(run);
    if (this.#scheduled || this.#ticking || this.#stopped) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#tick().catch((error: unknown) => this.#fatal(error));
    });
  }

  /**
   * The processing half of a tick: apply inboxes, decide, start effects, and hand the new
   * events to the commit pipeline. It does not wait for the commit: the next tick may
   * process (and dispatch) while the previous batch syncs, so at low load a step costs a
   * worker round trip, not a round trip plus a sync. Batches that wait for the commit in
   * flight merge into one, so at high load each sync carries everything that accumulated.
   */
  async #tick(): Promise<void> {
    if (this.#ticking || this.#stopped) return;
    this.#ticking = true;
    const now = this.#now();
    const runs = [...this.#dirty];
    this.#dirty.clear();
    const pending: PendingCommit = this.#pending ?? { batch: new Map(), waiters: [], ended: [] };
    this.#pending = pending;
    const effects: { run: Run; command: Command }[] = [];
    for (const run of runs) {
      let advanced: Advanced;
      try {
        advanced = await this.#advance(run, now);
      } catch (error) {
        this.#quarantine(run, error);
        continue;
      }
      if (advanced.events.length > 0) {
        const prior = pending.batch.get(run.id.runId);
        pending.batch.set(run.id.runId, {
          ...run.id,
          events: prior === undefined ? advanced.events : [...prior.events, ...advanced.events],
          status: run.state.status,
        });
      }
      pending.waiters.push(...advanced.waiters);
      for (const command of advanced.commands) effects.push({ run, command });
      if (run.state.status !== "Running") pending.ended.push(run);
    }
    // Effects go out before their events are durable. This is safe because nothing is
    // acknowledged before its commit and commits land in order: a crash only repeats work
    // that history does not show yet (the same decisions are made again from history), and
    // a result for an attempt whose scheduling was lost is never recorded.
    for (const { run, command } of effects) this.#effect(run, command);
    this.#dispatcher?.flush?.();
    this.#ticking = false;
    this.#pump().catch((error: unknown) => this.#fatal(error));
    this.#next();
  }

  /** Stops the engine after an error it cannot contain; history stays the truth. */
  #fatal(error: unknown): void {
    if (this.#stopped) return;
    this.#log.error({ err: error }, "engine stopped (history is the truth: restart to recover)");
    this.close();
    this.#opts.onFatal?.(error);
  }

  /** Commits the pending batch when no commit is in flight; then acknowledges it. */
  async #pump(): Promise<void> {
    if (this.#committing || this.#stopped) return;
    const pending = this.#pending;
    if (pending === undefined) {
      this.#settleIdle();
      return;
    }
    this.#pending = undefined;
    this.#committing = true;
    try {
      // One turn of the event loop first, so the frames the tick queued reach the sockets
      // before a store that commits synchronously (node:sqlite) holds the loop.
      await new Promise((resolve) => setImmediate(resolve));
      if (pending.batch.size > 0) await this.#opts.store.commit([...pending.batch.values()]);
    } catch (error) {
      this.#committing = false;
      for (const w of pending.waiters) w.fail?.(error);
      this.#fatal(error);
      return;
    }
    this.#committing = false;
    for (const w of pending.waiters) w.done?.();
    for (const run of pending.ended) {
      if (this.#runs.get(run.id.runId) === run) {
        this.#runs.delete(run.id.runId);
        this.#opts.onRunEnded?.(run.id.runId, run.state);
      }
    }
    await this.#pump();
  }

  #next(): void {
    if (this.#dirty.size === 0 || this.#scheduled || this.#stopped) {
      this.#settleIdle();
      return;
    }
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#tick().catch((error: unknown) => this.#fatal(error));
    });
  }

  #settleIdle(): void {
    if (this.#ticking || this.#scheduled || this.#committing || this.#pending !== undefined) return;
    if (this.#dirty.size > 0) return;
    for (const done of this.#idle.splice(0)) done();
  }

  /** Applies a run's inbox and decides; mutates only `run.state` and `run.inbox`. */
  async #advance(run: Run, now: number): Promise<Advanced> {
    const events: HistoryEvent[] = [];
    const waiters: InboxItem[] = [];
    const inbox = run.inbox;
    run.inbox = [];
    for (const item of inbox) {
      if (!this.#applicable(run.state, item.event)) {
        item.done?.();
        continue;
      }
      run.state = apply(run.state, item.event);
      events.push(item.event);
      waiters.push(item);
    }
    try {
      const { commands } = await decide(run.definition, run.state, now);
      for (const command of commands) {
        const event = eventOf(command, now);
        if (event === undefined) continue;
        run.state = apply(run.state, event);
        events.push(event);
      }
      return { events, commands, waiters };
    } catch (error) {
      for (const item of waiters) item.fail?.(error);
      throw error;
    }
  }

  /**
   * A run whose history or definition the engine cannot work with (a corrupt history, a
   * definition that is not the pinned one) is taken out of memory, reported, and left as it is
   * in the store for an operator; every other run goes on.
   */
  #quarantine(run: Run, error: unknown): void {
    this.#runs.delete(run.id.runId);
    for (const item of run.inbox) item.fail?.(error);
    run.inbox = [];
    this.#log.error({ err: error, run: run.id.runId }, "run quarantined");
    this.#opts.onRunError?.(run.id.runId, error);
  }

  /** Whether an inbox event still fits the run (a result may have been overtaken). */
  #applicable(state: RunState, event: HistoryEvent): boolean {
    switch (event.type) {
      case "ActivityCompleted":
      case "ActivityFailed":
      case "ActivityTimedOut":
        return acceptsResult(state, event.activity_id, event.attempt);
      case "TimerFired":
        return state.status === "Running" && state.timers.get(event.timer_id)?.fired === false;
      case "RunCancelled":
        return state.status === "Running";
      default:
        return true;
    }
  }

  #effect(run: Run, command: Command): void {
    const runId = run.id.runId;
    switch (command.type) {
      case "ScheduleActivity": {
        const ref = { run_id: runId, activity_id: command.activityId, attempt: command.attempt };
        if (command.dispatchAt <= this.#now()) this.#dispatch(run, ref);
        else
          this.#timers.set(`dispatch:${attemptKey(ref)}`, command.dispatchAt, {
            kind: "dispatch",
            runId,
            ref,
          });
        return;
      }
      case "StartTimer":
        this.#timers.set(`run:${runId}:${command.timerId}`, command.fireAt, {
          kind: "run",
          runId,
          timerId: command.timerId,
        });
        return;
      case "CancelActivity": {
        const ref = { run_id: runId, activity_id: command.activityId, attempt: command.attempt };
        this.#dispatcher?.release(ref, command.reason);
        this.#forgetAttempt(attemptKey(ref));
        return;
      }
      case "CompleteRun":
      case "FailRun":
      case "CancelRun":
        return;
    }
  }

  /** Offers the current attempt of an activity and arms its timeouts. */
  #dispatch(run: Run, ref: AttemptRef): void {
    const activity = run.state.activities.get(ref.activity_id);
    if (
      activity === undefined ||
      activity.result !== undefined ||
      activity.scheduled.attempt !== ref.attempt
    )
      return;
    const s = activity.scheduled;
    const key = attemptKey(ref);
    const now = this.#now();
    try {
      this.#dispatcher?.offer({
        ref,
        namespace: run.id.namespace,
        taskQueue: s.task_queue,
        workflowId: run.id.workflowId,
        action: s.action,
        inputJson: s.input_json,
        startToCloseMs: s.start_to_close_ms,
        heartbeatMs: s.heartbeat_ms,
      });
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      if (error.code !== "attempt_already_dispatched") {
        // The queue is full: the attempt fails now and is retried by its policy.
        this.#enqueueInternal(run, {
          type: "ActivityFailed",
          at: now,
          activity_id: ref.activity_id,
          attempt: ref.attempt,
          code: error.code,
          message: error.message,
          non_retryable: false,
        });
        return;
      }
    }
    if (s.start_to_close_ms > 0) {
      this.#timers.set(`stc:${key}`, now + s.start_to_close_ms, {
        kind: "start_to_close",
        runId: run.id.runId,
        ref,
      });
    }
    if (s.heartbeat_ms > 0) {
      this.#beats.set(key, now);
      this.#timers.set(`hb:${key}`, now + s.heartbeat_ms, {
        kind: "heartbeat",
        runId: run.id.runId,
        ref,
        ms: s.heartbeat_ms,
      });
    }
  }

  /** Drops an attempt's heartbeat record and timeout timers. */
  #forgetAttempt(key: string): void {
    this.#beats.delete(key);
    this.#timers.delete(`stc:${key}`);
    this.#timers.delete(`hb:${key}`);
    this.#timers.delete(`lost:${key}`);
  }

  #onTimer(payload: TimerPayload): void {
    const run = this.#runs.get(payload.runId);
    if (run === undefined) return;
    switch (payload.kind) {
      case "dispatch":
        this.#dispatch(run, payload.ref);
        return;
      case "run":
        this.#enqueueInternal(run, {
          type: "TimerFired",
          at: this.#now(),
          timer_id: payload.timerId,
        });
        return;
      case "start_to_close":
      case "heartbeat":
      case "worker_lost": {
        const { ref } = payload;
        if (!acceptsResult(run.state, ref.activity_id, ref.attempt)) return;
        const key = attemptKey(ref);
        if (payload.kind === "heartbeat") {
          const due = (this.#beats.get(key) ?? 0) + payload.ms;
          if (due > this.#now()) {
            this.#timers.set(`hb:${key}`, due, payload);
            return;
          }
        }
        this.#forgetAttempt(key);
        this.#dispatcher?.release(
          ref,
          payload.kind === "worker_lost" ? "worker lost" : `${payload.kind} timeout`,
        );
        this.#enqueueInternal(run, {
          type: "ActivityTimedOut",
          at: this.#now(),
          activity_id: ref.activity_id,
          attempt: ref.attempt,
          timeout: payload.kind,
        });
        return;
      }
    }
  }
}
