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

import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../../common/decode/sources.ts";
import { SkeinError } from "../../common/errors.ts";
import { type Logger, silentLogger } from "../../common/log.ts";
import { uuidv7 } from "../../common/uuid.ts";
import { type AttemptRef, attemptKey } from "../../protocol/attempt.ts";
import type { WorkflowDefinition } from "../definitions/types.ts";
import type { MatcherEvents, OfferOutcome, ResultContext, TaskOffer } from "../rpc/matcher.ts";
import { CollectMemos } from "./collect-memo.ts";
import { type Command, eventOf } from "./commands.ts";
import { cancelInFlight, decide } from "./decide.ts";
import type { EventOf, HistoryEvent, RunStatus } from "./history.ts";
import { Outbox, type OutboxEntry, type OutboxOptions } from "./outbox.ts";
import { SpeculationGate } from "./speculation.ts";
import {
  acceptsResult,
  apply,
  applyInPlace,
  EMPTY_RUN,
  inFlight,
  isLive,
  liveChildren,
  pendingTimers,
  type RunState,
  replay,
} from "./state.ts";
import type { EngineStore, OutboxWrite, RunAppend, RunIdentity } from "./store.ts";
import { TimerQueue } from "./timers.ts";

/** Whether `text` is one JSON value (what the decision core will parse it as). */
/**
 * Why a worker's output cannot enter history, or undefined when it can: it must be JSON, and
 * no deeper than every JSON edge of the server accepts (a stored output is read back through
 * the common parser, so a deeper one would make the run unreadable).
 */
function outputProblem(text: string): string | undefined {
  if (jsonDepthExceeds(text)) {
    return `the worker's output is nested deeper than ${MAX_JSON_DEPTH} levels`;
  }
  try {
    JSON.parse(text);
    return undefined;
  } catch {
    return `the worker's output is not valid JSON (${text.length} characters)`;
  }
}

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
  /** Attempts of a run a live worker holds now (a cancelled run stops every one of them). */
  liveAttempts?(runId: string): readonly { readonly ref: AttemptRef }[];
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

interface InboxItem {
  readonly event: HistoryEvent;
  readonly done?: () => void;
  readonly fail?: (error: unknown) => void;
}

interface PendingCommit {
  /** Commits are numbered in the order they are made (and land). */
  readonly generation: number;
  readonly batch: Map<string, RunAppend>;
  readonly waiters: InboxItem[];
  readonly ended: Run[];
  /** Outbox row writes by run, merged into the batch when it is committed. */
  readonly outbox: Map<string, { run: Run; writes: OutboxWrite[] }>;
}

interface Advanced {
  readonly events: HistoryEvent[];
  readonly commands: readonly Command[];
  readonly waiters: InboxItem[];
  /** Child runs started by this run's decisions (recorded in the same commit). */
  readonly spawned: Run[];
  readonly resumed: boolean;
}

interface Run {
  readonly id: RunIdentity;
  readonly definition: WorkflowDefinition;
  state: RunState;
  inbox: InboxItem[];
  /** Attempts due while the run was paused; dispatched when it resumes. */
  held: AttemptRef[];
  /** What decide remembers of the run's collects (derived; a restart starts afresh). */
  readonly memos: CollectMemos;
}

/** Applies an event to the run's state, and tells its collect memos what it touched. */
function applyTo(run: Run, event: HistoryEvent): void {
  run.state = applyInPlace(run.state, event);
  run.memos.touch(run.state, event);
}

const newPending = (generation: number): PendingCommit => ({
  generation,
  batch: new Map(),
  waiters: [],
  ended: [],
  outbox: new Map(),
});

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
  /** The number of the last commit made (see speculation.ts). */
  #generation = 0;
  readonly #speculation = new SpeculationGate<Run>((run, commands) => {
    for (const command of commands) this.#effect(run, command);
  });
  #scheduled = false;
  #committing = false;
  /** Processed events (and their waiters) waiting for the commit in flight to finish. */
  #pending: PendingCommit | undefined;
  #stopped = false;
  /** Resolvers waiting for the engine to be idle (tests, shutdown). */
  #idle: (() => void)[] = [];
  /** The member dispatcher; undefined when the outbox is disabled. */
  readonly #outbox: Outbox<Run> | undefined;

  /** Pass to the matcher: results and heartbeats flow into the engine. */
  readonly matcherEvents: MatcherEvents = {
    // Output that is not JSON fails the attempt (retried by its policy): it never reaches
    // history, where the decision core could not read it.
    completed: (ref, outputJson, ctx) =>
      this.#result(ref, ctx, (at) => {
        const problem = outputProblem(outputJson);
        return problem === undefined
          ? {
              type: "ActivityCompleted",
              at,
              activity_id: ref.activity_id,
              attempt: ref.attempt,
              output_json: outputJson,
            }
          : {
              type: "ActivityFailed",
              at,
              activity_id: ref.activity_id,
              attempt: ref.attempt,
              code: "bad_output",
              message: problem,
              non_retryable: false,
            };
      }),
    failed: (ref, failure, ctx) =>
      this.#result(ref, ctx, (at) => ({
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
      for (const ref of refs) {
        this.#timers.delete(`lost:${attemptKey(ref)}`);
        // A worker already holds it: its outbox row (if a restart left one) is done.
        this.#outbox?.drop(attemptKey(ref));
      }
    },
    // A hello lists an attempt the matcher does not hold (after a restart): where it belongs.
    owner: (ref) => {
      const run = this.#runs.get(ref.run_id);
      if (run === undefined || !acceptsResult(run.state, ref.activity_id, ref.attempt)) {
        return undefined;
      }
      const scheduled = run.state.activities.get(ref.activity_id)!.scheduled;
      return {
        namespace: run.id.namespace,
        taskQueue: scheduled.task_queue,
        action: scheduled.action,
      };
    },
    // An attempt that waited for a free slot is now with a worker: its timeouts start.
    assigned: (ref) => {
      this.#outbox?.placed(attemptKey(ref));
      const run = this.#runs.get(ref.run_id);
      const activity = run?.state.activities.get(ref.activity_id);
      if (run === undefined || activity === undefined || activity.result !== undefined) return;
      if (activity.scheduled.attempt !== ref.attempt) return;
      this.#armTimeouts(run.id.runId, ref, activity.scheduled, this.#now());
    },
  };

  constructor(options: EngineOptions) {
    this.#opts = options;
    this.#log = options.logger ?? silentLogger();
    this.#now = options.now ?? Date.now;
    this.#reattachGraceMs = options.reattachGraceMs ?? 10_000;
    this.#timers = new TimerQueue((_, payload) => this.#onTimer(payload), this.#now);
    this.#outbox =
      options.outbox?.enabled === true
        ? new Outbox<Run>(options.outbox, {
            ready: (e) => e.owner.state.status !== "Paused",
            handOff: (e) => this.#handOff(e),
            record: (e, state) =>
              this.#recordOutbox(e.owner, { activityId: e.activityId, attempt: e.attempt, state }),
          })
        : undefined;
  }

  /** Outbox rows claimed now in a namespace (0 when the outbox is disabled). */
  claimed(namespace: string): number {
    return this.#outbox?.claimed(namespace) ?? 0;
  }

  /** The highest claimed-row count seen in any namespace since start. */
  get maxClaimed(): number {
    return this.#outbox?.maxClaimed ?? 0;
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
    const open = new Map(
      this.#outbox === undefined
        ? []
        : (await this.#opts.store.loadOutbox()).map((r) => [
            attemptKey({ run_id: r.runId, activity_id: r.activityId, attempt: r.attempt }),
            r,
          ]),
    );
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
          held: [],
          memos: new CollectMemos(),
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
        const row = open.get(attemptKey(ref));
        if (scheduled.member === true && this.#outbox !== undefined && row === undefined) {
          // Its row is done: a worker held it before the restart and may re-attach it.
          this.#offer(run, ref);
          continue;
        }
        // A claim held by the process that died is void: the row waits for a new claim.
        if (row?.state === "claimed") {
          this.#recordOutbox(run, {
            activityId: ref.activity_id,
            attempt: ref.attempt,
            state: "pending",
          });
        }
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
    // A child whose parent ended (its cascade was cut short by the restart) is cancelled now.
    const live = new Set(stored.map((s) => s.runId));
    for (const run of this.#runs.values()) {
      const parent = run.state.started?.parent_run_id;
      if (parent !== undefined && !live.has(parent)) {
        this.#enqueueInternal(run, { type: "RunCancelled", at: now, reason: "requested" });
      }
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
      held: [],
      memos: new CollectMemos(),
    };
    this.#runs.set(request.runId, run);
    return this.#enqueue(run, {
      type: "RunStarted",
      at: this.#now(),
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
    return this.#control(runId, { type: "RunCancelled", at: this.#now(), reason: "requested" });
  }

  /** Pauses a Running run: it dispatches nothing new; work in flight finishes and is recorded. */
  pause(runId: string): Promise<ControlResult> {
    return this.#control(runId, { type: "RunPaused", at: this.#now() });
  }

  /** Resumes a Paused run: what it held back is dispatched and it decides again. */
  resume(runId: string): Promise<ControlResult> {
    return this.#control(runId, { type: "RunResumed", at: this.#now() });
  }

  /**
   * Records a signal in a Running or Paused run's history. A `wait` step for its name takes
   * it, now or later (a signal that arrives before the wait waits for it).
   */
  signal(runId: string, signal: string, payloadJson: string): Promise<ControlResult> {
    return this.#control(runId, {
      type: "SignalReceived",
      at: this.#now(),
      signal,
      payload_json: payloadJson,
    });
  }

  async #control(runId: string, event: HistoryEvent): Promise<ControlResult> {
    const run = this.#runs.get(runId);
    if (run === undefined) return { runId, applied: false, status: undefined };
    if (!this.#applicable(run.state, event)) {
      return { runId, applied: false, status: run.state.status };
    }
    const before = run.state.length;
    await this.#enqueue(run, event);
    // The event may have been overtaken in the inbox (the run ended first).
    const applied = run.state.length > before && this.#recorded(run, event);
    return { runId, applied, status: run.state.status };
  }

  /** Whether `event` is in the run's state (checked by what it changes). */
  #recorded(run: Run, event: HistoryEvent): boolean {
    switch (event.type) {
      case "RunCancelled":
        return run.state.ended === event;
      case "SignalReceived":
        return run.state.signals.some((s) => s.payloadJson === event.payload_json);
      default:
        return true;
    }
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

  #result(
    ref: AttemptRef,
    from: ResultContext,
    event: (at: number) => HistoryEvent,
  ): Promise<void> | undefined {
    const run = this.#runs.get(ref.run_id);
    if (run === undefined && this.#recovering !== undefined) {
      // A worker re-attached faster than the runs were loaded: ask again once they are.
      return this.#recovering.then(() => this.#result(ref, from, event));
    }
    // Not running here (ended, or unknown): nothing to record; the matcher acknowledges.
    if (run === undefined || !acceptsResult(run.state, ref.activity_id, ref.attempt))
      return undefined;
    // Only a worker of the attempt's own namespace and task queue may settle it.
    const queue = run.state.activities.get(ref.activity_id)!.scheduled.task_queue;
    if (from.namespace !== run.id.namespace || from.taskQueue !== queue) {
      this.#log.warn(
        { run: ref.run_id, session: from.sessionId },
        "result from a worker of another namespace or task queue; dropped",
      );
      return undefined;
    }
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
    const pending: PendingCommit = this.#pending ?? this.#newPending();
    this.#pending = pending;
    const effects: { run: Run; commands: Command[] }[] = [];
    for (const run of runs) {
      const wasLive = isLive(run.state) || run.state.started === undefined;
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
      if (advanced.commands.length > 0) effects.push({ run, commands: [...advanced.commands] });
      for (const child of advanced.spawned) {
        // The child's start joins the commit that records ChildStarted in the parent.
        this.#runs.set(child.id.runId, child);
        pending.batch.set(child.id.runId, {
          ...child.id,
          events: [child.state.started!],
          status: child.state.status,
        });
        this.#markDirty(child);
      }
      if (advanced.resumed) {
        for (const ref of run.held.splice(0)) this.#dispatch(run, ref);
        this.#outbox?.resume(run.id.runId);
      }
      if (!isLive(run.state)) {
        pending.ended.push(run);
        if (wasLive) this.#ended(run, pending);
      }
    }
    for (const { run, commands } of effects) {
      this.#speculation.release(run, commands, pending.generation);
    }
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

  /**
   * A run ended in this tick: its live children are cancelled (each records its own
   * RunCancelled in a later tick, and cascades further from there), and its parent, if it is
   * waiting for it, records ChildEnded in this same commit.
   */
  #ended(run: Run, pending: PendingCommit): void {
    run.held = [];
    const end = run.state.ended!;
    const reason = end.type === "RunCancelled" ? end.reason : "requested";
    if (end.type === "RunCancelled") {
      // Controls for every live attempt of the run, including any history no longer counts
      // as in flight (a superseded attempt a worker still runs).
      for (const { ref } of this.#dispatcher?.liveAttempts?.(run.id.runId) ?? []) {
        const a = run.state.activities.get(ref.activity_id);
        const inFlight = a?.scheduled.attempt === ref.attempt && a.result === undefined;
        // In-flight attempts get their cancel from the decision (CancelActivity) once.
        if (!inFlight) this.#dispatcher?.release(ref, `the run was cancelled (${reason})`);
      }
    }
    for (const childId of liveChildren(run.state)) {
      const child = this.#runs.get(childId);
      if (child !== undefined) {
        this.#enqueueInternal(child, { type: "RunCancelled", at: this.#now(), reason });
      }
    }
    const parentId = run.state.started?.parent_run_id;
    const parent = parentId === undefined ? undefined : this.#runs.get(parentId);
    if (parent === undefined || !isLive(parent.state)) return;
    if (!liveChildren(parent.state).includes(run.id.runId)) return;
    const event: EventOf<"ChildEnded"> = {
      type: "ChildEnded",
      at: this.#now(),
      child_run_id: run.id.runId,
      status: run.state.status as "Completed" | "Failed" | "Cancelled",
      output_json: end.type === "RunCompleted" ? end.output_json : "null",
      message:
        end.type === "RunFailed"
          ? `${end.code}: ${end.message}`
          : end.type === "RunCancelled"
            ? end.reason
            : "",
    };
    applyTo(parent, event);
    const prior = pending.batch.get(parent.id.runId);
    pending.batch.set(parent.id.runId, {
      ...parent.id,
      events: prior === undefined ? [event] : [...prior.events, event],
      status: parent.state.status,
    });
    this.#markDirty(parent);
  }

  /** Queues an outbox row write for the next commit (outside a tick it starts one). */
  #recordOutbox(run: Run, write: OutboxWrite): void {
    if (this.#stopped) return;
    this.#pending ??= this.#newPending();
    const entry = this.#pending.outbox.get(run.id.runId);
    if (entry === undefined) this.#pending.outbox.set(run.id.runId, { run, writes: [write] });
    else entry.writes.push(write);
    if (!this.#ticking) this.#pump().catch((error: unknown) => this.#fatal(error));
  }

  /** Commits the pending batch when no commit is in flight; then acknowledges it. */
  async #pump(): Promise<void> {
    // A tick still filling the pending batch commits it when it ends.
    if (this.#committing || this.#stopped || this.#ticking) return;
    const pending = this.#pending;
    if (pending === undefined) {
      this.#settleIdle();
      return;
    }
    this.#pending = undefined;
    this.#committing = true;
    try {
      for (const [runId, { run, writes }] of pending.outbox) {
        const prior = pending.batch.get(runId);
        pending.batch.set(runId, {
          ...(prior ?? { ...run.id, events: [], status: run.state.status }),
          outbox: writes,
        });
      }
      if (pending.batch.size > 0) await this.#opts.store.commit([...pending.batch.values()]);
    } catch (error) {
      this.#committing = false;
      for (const w of pending.waiters) w.fail?.(error);
      this.#fatal(error);
      return;
    }
    this.#committing = false;
    if (!this.#stopped && this.#speculation.landed(pending.generation)) {
      this.#dispatcher?.flush?.();
    }
    for (const w of pending.waiters) w.done?.();
    for (const run of pending.ended) {
      if (this.#runs.get(run.id.runId) === run) {
        this.#runs.delete(run.id.runId);
        this.#opts.onRunEnded?.(run.id.runId, run.state);
      }
    }
    await this.#pump();
  }

  #newPending(): PendingCommit {
    return newPending(++this.#generation);
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
    const spawned: Run[] = [];
    let resumed = false;
    const inbox = run.inbox;
    run.inbox = [];
    for (const item of inbox) {
      if (!this.#applicable(run.state, item.event)) {
        item.done?.();
        continue;
      }
      applyTo(run, item.event);
      if (item.event.type === "RunResumed") resumed = true;
      events.push(item.event);
      waiters.push(item);
    }
    try {
      let { commands } = await decide(run.definition, run.state, now, run.memos);
      const children = await this.#resolveChildren(run, commands);
      if (children instanceof SkeinError) {
        commands = [
          { type: "FailRun", code: children.code, message: children.message },
          ...cancelInFlight(run.state, "the run failed"),
        ];
      }
      for (const command of commands) {
        let event = eventOf(command, now);
        if (command.type === "StartChild" && !(children instanceof SkeinError)) {
          const child = this.#childRun(run, command, children.get(command.stepId)!, now);
          spawned.push(child);
          event = {
            type: "ChildStarted",
            at: now,
            step_id: command.stepId,
            child_run_id: child.id.runId,
            workflow: command.workflow,
            definition_version: child.definition.version,
            input_json: command.inputJson,
          };
        }
        if (event === undefined) continue;
        applyTo(run, event);
        events.push(event);
        if (event.type === "ActivityScheduled" && event.member === true && this.#outbox) {
          // The member's outbox row is written in the commit that schedules it.
          this.#recordOutbox(run, {
            activityId: event.activity_id,
            attempt: event.attempt,
            state: "pending",
          });
        }
      }
      return { events, commands, waiters, spawned, resumed };
    } catch (error) {
      for (const item of waiters) item.fail?.(error);
      throw error;
    }
  }

  /** The definitions of the children `commands` start, by step; a refusal fails the run. */
  async #resolveChildren(
    run: Run,
    commands: readonly Command[],
  ): Promise<Map<string, WorkflowDefinition> | SkeinError> {
    const out = new Map<string, WorkflowDefinition>();
    for (const command of commands) {
      if (command.type !== "StartChild") continue;
      const resolve = this.#opts.childDefinition;
      if (resolve === undefined) {
        return new SkeinError(
          "child_workflows_unavailable",
          `step ${JSON.stringify(command.stepId)}: this engine resolves no child workflows`,
        );
      }
      try {
        out.set(command.stepId, await resolve(run.id.namespace, command.workflow, command.version));
      } catch (error) {
        if (!(error instanceof SkeinError)) throw error;
        return new SkeinError(
          error.code,
          `step ${JSON.stringify(command.stepId)}: ${error.message}`,
        );
      }
    }
    return out;
  }

  /** A new child run, its RunStarted applied (recorded with the parent's ChildStarted). */
  #childRun(
    parent: Run,
    command: Extract<Command, { type: "StartChild" }>,
    definition: WorkflowDefinition,
    now: number,
  ): Run {
    const runId = uuidv7();
    const started: HistoryEvent = {
      type: "RunStarted",
      at: now,
      workflow_id: runId,
      definition_version: definition.version,
      input_json: command.inputJson,
      parent_run_id: parent.id.runId,
    };
    return {
      id: {
        runId,
        workflowId: runId,
        namespace: parent.id.namespace,
        definitionVersion: definition.version,
      },
      definition,
      state: apply(EMPTY_RUN, started),
      inbox: [],
      held: [],
      memos: new CollectMemos(),
    };
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
    this.#speculation.forget(run);
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
        return isLive(state) && state.timers.get(event.timer_id)?.fired === false;
      case "RunCancelled":
      case "SignalReceived":
        return isLive(state);
      case "RunPaused":
        return state.status === "Running";
      case "RunResumed":
        return state.status === "Paused";
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
      case "StartChild":
        return;
    }
  }

  /**
   * Sends an attempt on its way: a member of a parallel or collect goes to the outbox (when
   * enabled), anything else is offered at once. A paused run holds it until it resumes.
   */
  #dispatch(run: Run, ref: AttemptRef): void {
    const activity = run.state.activities.get(ref.activity_id);
    if (
      activity === undefined ||
      activity.result !== undefined ||
      activity.scheduled.attempt !== ref.attempt ||
      !isLive(run.state)
    )
      return;
    if (activity.scheduled.member === true && this.#outbox !== undefined) {
      this.#outbox.add({
        key: attemptKey(ref),
        namespace: run.id.namespace,
        runId: ref.run_id,
        activityId: ref.activity_id,
        attempt: ref.attempt,
        owner: run,
      });
      return;
    }
    if (run.state.status === "Paused") {
      run.held.push(ref);
      return;
    }
    this.#offer(run, ref);
  }

  /** The outbox hands a claimed row off: placed with a worker, queued for a slot, or gone. */
  #handOff(entry: OutboxEntry<Run>): "placed" | "queued" | "dropped" {
    const outcome = this.#offer(entry.owner, {
      run_id: entry.runId,
      activity_id: entry.activityId,
      attempt: entry.attempt,
    });
    return outcome === "dispatched" ? "placed" : outcome;
  }

  /** Offers the current attempt of an activity and arms its timeouts. */
  #offer(run: Run, ref: AttemptRef): "dispatched" | "queued" | "dropped" {
    const activity = run.state.activities.get(ref.activity_id);
    if (
      activity === undefined ||
      activity.result !== undefined ||
      activity.scheduled.attempt !== ref.attempt ||
      !isLive(run.state)
    )
      return "dropped";
    const s = activity.scheduled;
    let outcome: "dispatched" | "queued" = "queued";
    const now = this.#now();
    try {
      outcome =
        this.#dispatcher?.offer({
          ref,
          namespace: run.id.namespace,
          taskQueue: s.task_queue,
          workflowId: run.id.workflowId,
          action: s.action,
          inputJson: s.input_json,
          startToCloseMs: s.start_to_close_ms,
          heartbeatMs: s.heartbeat_ms,
        }) ?? "queued";
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
        return "dropped";
      }
      // Already with the matcher (a worker re-attached it): nothing more to hand off.
      outcome = "dispatched";
    }
    // The timeouts run from when a worker holds the attempt: one still waiting for a free
    // slot (queued at the matcher) is armed when the matcher assigns it (`assigned`).
    if (outcome === "dispatched") this.#armTimeouts(run.id.runId, ref, s, now);
    return outcome;
  }

  /** Arms an attempt's start-to-close and heartbeat timeouts from `now`. */
  #armTimeouts(runId: string, ref: AttemptRef, s: EventOf<"ActivityScheduled">, now: number): void {
    const key = attemptKey(ref);
    if (s.start_to_close_ms > 0) {
      this.#timers.set(`stc:${key}`, now + s.start_to_close_ms, {
        kind: "start_to_close",
        runId,
        ref,
      });
    }
    if (s.heartbeat_ms > 0) {
      this.#beats.set(key, now);
      this.#timers.set(`hb:${key}`, now + s.heartbeat_ms, {
        kind: "heartbeat",
        runId,
        ref,
        ms: s.heartbeat_ms,
      });
    }
  }

  /** Drops an attempt's heartbeat record, timeout timers and outbox row. */
  #forgetAttempt(key: string): void {
    this.#outbox?.drop(key);
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
