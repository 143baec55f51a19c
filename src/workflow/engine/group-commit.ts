/**
 * The engine loop's commit pipeline: inputs land in a run's inbox and mark it dirty; a tick
 * applies every dirty run's inbox, decides, starts the effects, and hands the new events to
 * the commit; the commit writes every run that advanced in one store transaction (group
 * commit) and only then acknowledges: waiters resolve, finished runs are reported, and
 * speculative effects held back by speculation.ts go out. Outbox row writes join the same
 * commit. Nothing here polls: an input schedules a tick.
 *
 * Tick:  inbox events applied --> decide per dirty run --> effects --> (pipeline) one commit --> acks
 */

import { SkeinError } from "../../common/errors.ts";
import type { WorkflowDefinition } from "../definitions/types.ts";
import { dispatch } from "./attempts.ts";
import { type Command, eventOf } from "./commands.ts";
import type { EngineCore, PendingCommit } from "./core.ts";
import { stoppedError } from "./core.ts";
import { cancelInFlight, decideNow } from "./decide.ts";
import type { HistoryEvent } from "./history.ts";
import { markDirty } from "./inbox.ts";
import { applicable, applyTo, type InboxItem, type Run } from "./run.ts";
import { childRun, ended, resolveChildren } from "./run-tree.ts";
import { isLive } from "./state.ts";
import type { OutboxWrite } from "./store.ts";

interface Advanced {
  readonly events: HistoryEvent[];
  readonly commands: readonly Command[];
  readonly waiters: InboxItem[];
  /** Child runs started by this run's decisions (recorded in the same commit). */
  readonly spawned: readonly Run[];
  readonly resumed: boolean;
}

const newPending = (generation: number): PendingCommit => ({
  generation,
  batch: new Map(),
  waiters: [],
  ended: [],
  outbox: new Map(),
});

/**
 * The processing half of a tick: apply inboxes, decide, start effects, and hand the new
 * events to the commit pipeline. It does not wait for the commit: the next tick may
 * process (and dispatch) while the previous batch syncs, so at low load a step costs a
 * worker round trip, not a round trip plus a sync. Batches that wait for the commit in
 * flight merge into one, so at high load each sync carries everything that accumulated.
 */
export async function tick(core: EngineCore): Promise<void> {
  if (core.ticking || core.stopped) return;
  core.ticking = true;
  const now = core.now();
  // The dirty runs as an array, walked by index: a `for…of` over the set makes an iterator
  // result per run, about three times the bytes of this copy (Node 24, measured in isolation).
  const runs = [...core.dirty];
  core.dirty = new Set();
  const pending: PendingCommit = core.pending ?? nextPending(core);
  core.pending = pending;
  const effects: { run: Run; commands: readonly Command[] }[] = [];
  for (let r = 0; r < runs.length; r++) {
    const run = runs[r]!;
    const wasLive = isLive(run.state) || run.state.started === undefined;
    let advanced: Advanced;
    try {
      const next = advance(core, run, now);
      advanced = next instanceof Promise ? await next : next;
    } catch (error) {
      quarantine(core, run, error);
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
    // Indexed loops on this path: a `for…of` over an array costs an iterator result per item
    // wherever V8 runs the function without inlining the iterator (Ignition, Maglev).
    const { waiters, spawned } = advanced;
    for (let i = 0; i < waiters.length; i++) pending.waiters.push(waiters[i]!);
    // A decision's commands are its own array (decide builds one per decision): no copy.
    if (advanced.commands.length > 0) effects.push({ run, commands: advanced.commands });
    for (let i = 0; i < spawned.length; i++) {
      const child = spawned[i]!;
      // The child's start joins the commit that records ChildStarted in the parent.
      core.runs.set(child.id.runId, child);
      pending.batch.set(child.id.runId, {
        ...child.id,
        events: [child.state.started!],
        status: child.state.status,
      });
      markDirty(core, child);
    }
    if (advanced.resumed) {
      for (const ref of run.held.splice(0)) dispatch(core, run, ref);
      core.outbox?.resume(run.id.runId);
    }
    if (!isLive(run.state)) {
      pending.ended.push(run);
      if (wasLive) ended(core, run, pending);
    }
  }
  for (let i = 0; i < effects.length; i++) {
    const { run, commands } = effects[i]!;
    core.speculation.release(run, commands, pending.generation);
  }
  core.dispatcher?.flush?.();
  core.ticking = false;
  pump(core).catch((error: unknown) => fatal(core, error));
  next(core);
}
/** Stops the engine after an error it cannot contain; history stays the truth. */
export function fatal(core: EngineCore, error: unknown): void {
  if (core.stopped) return;
  core.log.error({ err: error }, "engine stopped (history is the truth: restart to recover)");
  stop(core);
  core.opts.onFatal?.(error);
}
/**
 * Stops the engine. Inputs not yet committed are refused (their results stay with their
 * workers, which send them again to the next server); a commit in flight still lands.
 */
export function stop(core: EngineCore): void {
  if (core.stopped) return;
  core.stopped = true;
  core.timers.close();
  const stopped = stoppedError();
  for (const w of core.pending?.waiters ?? []) w.fail?.(stopped);
  core.pending = undefined;
  for (const run of core.runs.values()) {
    for (const item of run.inbox) item.fail?.(stopped);
    run.inbox = [];
  }
}

/** Queues an outbox row write for the next commit (outside a tick it starts one). */
export function recordOutbox(core: EngineCore, run: Run, write: OutboxWrite): void {
  if (core.stopped) return;
  core.pending ??= nextPending(core);
  const entry = core.pending.outbox.get(run.id.runId);
  if (entry === undefined) core.pending.outbox.set(run.id.runId, { run, writes: [write] });
  else entry.writes.push(write);
  if (!core.ticking) pump(core).catch((error: unknown) => fatal(core, error));
}
/** Commits the pending batch when no commit is in flight; then acknowledges it. */
export async function pump(core: EngineCore): Promise<void> {
  // A tick still filling the pending batch commits it when it ends.
  if (core.committing || core.stopped || core.ticking) return;
  const pending = core.pending;
  if (pending === undefined) {
    settleIdle(core);
    return;
  }
  core.pending = undefined;
  core.committing = true;
  try {
    for (const [runId, { run, writes }] of pending.outbox) {
      const prior = pending.batch.get(runId);
      pending.batch.set(runId, {
        ...(prior ?? { ...run.id, events: [], status: run.state.status }),
        outbox: writes,
      });
    }
    if (pending.batch.size > 0) {
      const commit = core.opts.store.commit([...pending.batch.values()]);
      core.landing = commit.then(
        () => undefined,
        () => undefined,
      );
      await commit;
    }
  } catch (error) {
    core.committing = false;
    core.landing = undefined;
    for (const w of pending.waiters) w.fail?.(error);
    fatal(core, error);
    return;
  }
  core.committing = false;
  core.landing = undefined;
  if (!core.stopped && core.speculation.landed(pending.generation)) {
    core.dispatcher?.flush?.();
  }
  const { waiters, ended: endedRuns } = pending;
  for (let i = 0; i < waiters.length; i++) waiters[i]!.done?.();
  for (let i = 0; i < endedRuns.length; i++) {
    const run = endedRuns[i]!;
    if (core.runs.get(run.id.runId) === run) {
      core.runs.delete(run.id.runId);
      core.opts.onRunEnded?.(run.id.runId, run.state);
    }
  }
  await pump(core);
}
export function nextPending(core: EngineCore): PendingCommit {
  return newPending(++core.generation);
}

export function next(core: EngineCore): void {
  if (core.dirty.size === 0 || core.scheduled || core.stopped) {
    settleIdle(core);
    return;
  }
  core.scheduled = true;
  setImmediate(() => {
    core.scheduled = false;
    tick(core).catch((error: unknown) => fatal(core, error));
  });
}
export function settleIdle(core: EngineCore): void {
  if (core.ticking || core.scheduled || core.committing || core.pending !== undefined) return;
  if (core.dirty.size > 0) return;
  for (const done of core.idle.splice(0)) done();
}
/**
 * Applies a run's inbox and decides; mutates only `run.state` and `run.inbox`. Synchronous
 * unless the decision or a child's definition must be awaited: most steps of most runs
 * advance without a promise.
 */
export function advance(core: EngineCore, run: Run, now: number): Advanced | Promise<Advanced> {
  let resumed = false;
  // The items applied become the waiters, kept in the inbox's own array (an array made and
  // grown per run and tick costs about 170 bytes): an item never applied is done at once.
  const waiters = run.inbox;
  run.inbox = [];
  let kept = 0;
  for (let i = 0; i < waiters.length; i++) {
    const item = waiters[i]!;
    if (!applicable(run.state, item.event)) {
      item.done?.();
      continue;
    }
    applyTo(run, item.event);
    if (item.event.type === "RunResumed") resumed = true;
    waiters[kept++] = item;
  }
  waiters.length = kept;
  try {
    const decision = decideNow(run.definition, run.state, now, run.memos);
    if (decision instanceof Promise) {
      return decision
        .then((d) => withChildren(core, run, now, d.commands, waiters, resumed))
        .catch((error: unknown) => refuse(waiters, error));
    }
    const advanced = withChildren(core, run, now, decision.commands, waiters, resumed);
    return advanced instanceof Promise
      ? advanced.catch((error: unknown) => refuse(waiters, error))
      : advanced;
  } catch (error) {
    return refuse(waiters, error);
  }
}

/** A decision that failed fails the inputs it applied, then the run (the tick quarantines it). */
function refuse(waiters: readonly InboxItem[], error: unknown): never {
  for (const item of waiters) item.fail?.(error);
  throw error;
}

/** The child definitions a decision needs (only a StartChild awaits them), then `record`. */
function withChildren(
  core: EngineCore,
  run: Run,
  now: number,
  commands: readonly Command[],
  waiters: InboxItem[],
  resumed: boolean,
): Advanced | Promise<Advanced> {
  if (!commands.some((c) => c.type === "StartChild")) {
    return record(core, run, now, commands, NO_CHILDREN, waiters, resumed);
  }
  return resolveChildren(core, run, commands).then((children) =>
    record(core, run, now, commands, children, waiters, resumed),
  );
}

const NO_CHILDREN: ReadonlyMap<string, WorkflowDefinition> = new Map();
/** What most decisions spawn (`record` makes an array of its own for a child). */
const NO_SPAWNS: readonly Run[] = [];

/** Applies a decision's events to the run and gathers what the tick hands on. */
function record(
  core: EngineCore,
  run: Run,
  now: number,
  decided: readonly Command[],
  children: ReadonlyMap<string, WorkflowDefinition> | SkeinError,
  waiters: InboxItem[],
  resumed: boolean,
): Advanced {
  let spawned: Run[] | undefined;
  let commands = decided;
  if (children instanceof SkeinError) {
    commands = [
      { type: "FailRun", code: children.code, message: children.message },
      ...cancelInFlight(run.state, "the run failed"),
    ];
  }
  // The inputs applied, then the decision's events: at most one per command, so the array is
  // made at its size (grown from `[]`, it reserves 17 slots, about 150 bytes, for what is two
  // events most steps) and cut to the count.
  const events = new Array<HistoryEvent>(waiters.length + commands.length);
  let count = 0;
  for (let i = 0; i < waiters.length; i++) events[count++] = waiters[i]!.event;
  for (let i = 0; i < commands.length; i++) {
    const command = commands[i]!;
    let event = eventOf(command, now);
    if (command.type === "StartChild" && !(children instanceof SkeinError)) {
      const child = childRun(run, command, children.get(command.stepId)!, now);
      spawned ??= [];
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
    events[count++] = event;
    if (event.type === "ActivityScheduled" && event.member === true && core.outbox) {
      // The member's outbox row is written in the commit that schedules it.
      recordOutbox(core, run, {
        activityId: event.activity_id,
        attempt: event.attempt,
        state: "pending",
      });
    }
  }
  events.length = count;
  return { events, commands, waiters, spawned: spawned ?? NO_SPAWNS, resumed };
}
/**
 * A run whose history or definition the engine cannot work with (a corrupt history, a
 * definition that is not the pinned one) is taken out of memory, reported, and left as it is
 * in the store for an operator; every other run goes on.
 */
export function quarantine(core: EngineCore, run: Run, error: unknown): void {
  core.runs.delete(run.id.runId);
  for (const item of run.inbox) item.fail?.(error);
  run.inbox = [];
  core.speculation.forget(run);
  core.log.error({ err: error, run: run.id.runId }, "run quarantined");
  core.opts.onRunError?.(run.id.runId, error);
}
