/**
 * Optional OpenTelemetry traces of runs (`tracing.enabled`, off by default): one
 * `skein.run` span from a run's durable start to its durable end, and a `skein.activity`
 * child span per attempt, from its offer to the worker's result (or the engine giving it
 * up). Only `@opentelemetry/api` is used: spans go to whatever TracerProvider the process
 * registered (`node --import` of an SDK set-up, docs/operations.md); with none registered
 * they are no-ops. Like the metrics, tracing wraps the roles' interfaces (the engine store,
 * the dispatcher, the matcher's events) and is not installed at all when off, so the hot
 * paths pay nothing. Open spans are kept per run and per attempt, each map capped, so a
 * stuck run or a lost result cannot grow them without bound.
 */

import { context, type Span, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { VERSION } from "../../common/version.ts";
import { type AttemptRef, attemptKey } from "../../protocol/attempt.ts";
import type { Dispatcher, MatcherEvents } from "../engine/dispatcher.ts";
import type { EngineStore } from "../engine/store.ts";
import { aroundDispatcher, aroundEvents } from "./around.ts";

/** Open spans kept at most, per kind; past it new runs or attempts go untraced. */
export const MAX_OPEN_SPANS = 100_000;

const ENDED = new Set(["Completed", "Failed", "Cancelled"]);

export interface RunTracing {
  store(inner: EngineStore): EngineStore;
  dispatcher(inner: Dispatcher): Dispatcher;
  events(inner: MatcherEvents): MatcherEvents;
}

export function runTracing(tracer: Tracer = trace.getTracer("skein", VERSION)): RunTracing {
  const runs = new Map<string, Span>();
  const attempts = new Map<string, Span>();

  const endAttempt = (ref: AttemptRef, outcome: string, error?: string) => {
    const key = attemptKey(ref);
    const span = attempts.get(key);
    if (span === undefined) return;
    attempts.delete(key);
    span.setAttribute("skein.outcome", outcome);
    if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    span.end();
  };

  // The engine offers a run's first attempts before the commit holding its start is durable
  // (speculation.ts), so a run's span opens at whichever comes first.
  const runSpan = (runId: string, at?: number): Span | undefined => {
    let span = runs.get(runId);
    if (span === undefined && runs.size < MAX_OPEN_SPANS) {
      span = tracer.startSpan("skein.run", {
        ...(at === undefined ? {} : { startTime: at }),
        attributes: { "skein.run_id": runId },
      });
      runs.set(runId, span);
    }
    return span;
  };

  return {
    store: (inner) => ({
      async commit(batch) {
        await inner.commit(batch);
        for (const append of batch) {
          const started = append.events.find((e) => e.type === "RunStarted");
          if (started !== undefined) {
            runSpan(append.runId, started.at)?.setAttributes({
              "skein.namespace": append.namespace,
              "skein.workflow_id": append.workflowId,
              "skein.definition_version": append.definitionVersion,
            });
          }
          if (!ENDED.has(append.status)) continue;
          const span = runs.get(append.runId);
          if (span === undefined) continue;
          runs.delete(append.runId);
          span.setAttribute("skein.status", append.status);
          if (append.status === "Failed") span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        }
      },
      loadRunning: () => inner.loadRunning(),
      loadOutbox: () => inner.loadOutbox(),
    }),
    dispatcher: (inner) =>
      aroundDispatcher(inner, {
        offered(task) {
          const key = attemptKey(task.ref);
          if (attempts.size >= MAX_OPEN_SPANS || attempts.has(key)) return;
          const run = runSpan(task.ref.run_id);
          const parent =
            run === undefined ? context.active() : trace.setSpan(context.active(), run);
          const attributes = {
            "skein.run_id": task.ref.run_id,
            "skein.activity_id": task.ref.activity_id,
            "skein.attempt": task.ref.attempt,
            "skein.action": task.action,
            "skein.task_queue": task.taskQueue,
          };
          attempts.set(key, tracer.startSpan("skein.activity", { attributes }, parent));
        },
        released: (ref, reason) => endAttempt(ref, "released", reason),
      }),
    events: (inner) => aroundEvents(inner, (ref, outcome, code) => endAttempt(ref, outcome, code)),
  };
}
