/**
 * After a restart the engine rebuilds each running run from its history: the run's state is
 * replayed, its in-flight attempts are dispatched again (or left for the worker that held
 * them to re-attach, when their outbox row is done), its timers are re-armed, and a child
 * whose parent ended while the cascade was cut short is cancelled. Results that arrive while
 * runs load wait for them (`core.recovering`).
 *
 * After a takeover (a cluster node recovering a shard another node held) no worker can
 * re-attach an attempt here, and the attempt may have run, or still run, where the other node
 * sent it. Running it again under the same `(activity_id, attempt)` would look like a
 * duplicate delivery to a worker that dedupes on the attempt, so each attempt that may have
 * been offered (its dispatch time has come) is ended as `owner_lost` and the next attempt is
 * scheduled at once (retry.ts), its outbox row, if any, closed with it.
 */

import { attemptKey } from "../../protocol/attempt.ts";
import { dispatch, offer } from "./attempts.ts";
import { type EngineCore, TIMERS } from "./core.ts";
import { recordOutbox } from "./group-commit.ts";
import { enqueueInternal, markDirty } from "./inbox.ts";
import { newRun, type Run } from "./run.ts";
import { inFlight, pendingTimers, replay } from "./state.ts";

export interface RecoverOptions {
  /** The runs were last served by another node (a takeover), not by this one. */
  readonly takeover?: boolean;
}

/** Rebuilds every running run from the store; returns how many. */
export function recover(core: EngineCore, options: RecoverOptions = {}): Promise<number> {
  const recovery = load(core, options.takeover === true);
  // Results that arrive while runs are being loaded wait for them (see attempts.ts, result).
  const gate = recovery.then(
    () => undefined,
    () => undefined,
  );
  core.recovering = gate;
  void gate.then(() => {
    if (core.recovering === gate) core.recovering = undefined;
  });
  return recovery;
}

async function load(core: EngineCore, takeover: boolean): Promise<number> {
  const stored = await core.opts.store.loadRunning();
  const open = new Map(
    core.outbox === undefined
      ? []
      : (await core.opts.store.loadOutbox()).map((r) => [
          attemptKey({ run_id: r.runId, activity_id: r.activityId, attempt: r.attempt }),
          r,
        ]),
  );
  const now = core.now();
  for (const s of stored) {
    let run: Run;
    try {
      const id = {
        runId: s.runId,
        workflowId: s.workflowId,
        namespace: s.namespace,
        definitionVersion: s.definitionVersion,
      };
      const definition = await core.opts.definitions(s.namespace, s.definitionVersion);
      run = newRun(id, definition, replay(s.history));
    } catch (error) {
      core.log.error({ err: error, run: s.runId }, "run not recovered");
      core.opts.onRunError?.(s.runId, error);
      continue;
    }
    core.runs.set(s.runId, run);
    for (const scheduled of inFlight(run.state)) {
      const ref = {
        run_id: s.runId,
        activity_id: scheduled.activity_id,
        attempt: scheduled.attempt,
      };
      const row = open.get(attemptKey(ref));
      if (takeover && scheduled.dispatch_at <= now) {
        if (row !== undefined) {
          recordOutbox(core, run, {
            activityId: ref.activity_id,
            attempt: ref.attempt,
            state: "done",
          });
        }
        enqueueInternal(core, run, {
          type: "ActivityTimedOut",
          at: now,
          activity_id: ref.activity_id,
          attempt: ref.attempt,
          timeout: "owner_lost",
        });
        continue;
      }
      if (scheduled.member === true && core.outbox !== undefined && row === undefined) {
        // Its row is done: a worker held it before the restart and may re-attach it.
        offer(core, run, ref);
        continue;
      }
      // A claim held by the process that died is void: the row waits for a new claim.
      if (row?.state === "claimed") {
        recordOutbox(core, run, {
          activityId: ref.activity_id,
          attempt: ref.attempt,
          state: "pending",
        });
      }
      if (scheduled.dispatch_at <= now) dispatch(core, run, ref);
      else
        core.timers.set(
          attemptKey(ref),
          scheduled.dispatch_at,
          { kind: "dispatch", runId: s.runId, ref },
          TIMERS.dispatch,
        );
    }
    for (const t of pendingTimers(run.state)) {
      core.timers.set(`run:${s.runId}:${t.timerId}`, t.fireAt, {
        kind: "run",
        runId: s.runId,
        timerId: t.timerId,
      });
    }
    // A crash between a result's commit and its decision cannot happen (they share a tick),
    // but deciding again is harmless: decide is idempotent on a waiting run.
    markDirty(core, run);
  }
  // A child whose parent ended (its cascade was cut short by the restart) is cancelled now.
  const live = new Set(stored.map((s) => s.runId));
  for (const run of core.runs.values()) {
    const parent = run.state.started?.parent_run_id;
    if (parent !== undefined && !live.has(parent)) {
      enqueueInternal(core, run, { type: "RunCancelled", at: now, reason: "requested" });
    }
  }
  core.log.info({ runs: stored.length }, "engine recovered running runs");
  return stored.length;
}
