/**
 * What the matcher shows to status reads: the connected worker sessions (the workers read)
 * and a run's attempts a live worker holds (the attempts read, interventions). Copies built
 * on demand, so a read never holds a reference into the matcher's state.
 */

import type { AttemptRef } from "../../protocol/attempt.ts";
import type { Holdings } from "./holdings.ts";
import type { Session } from "./session.ts";

/** A connected worker session, as a status read lists it. */
export interface WorkerSession {
  readonly sessionId: string;
  readonly name: string;
  readonly kind: string;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly concurrency: number;
  readonly deployment: string;
  readonly instanceId: string;
  readonly actions: readonly { action: string; capabilities: readonly string[] }[];
  /** Attempts it holds now. */
  readonly busy: number;
}

/** A live attempt, as the attempts read lists it. */
export interface LiveAttempt {
  readonly ref: AttemptRef;
  readonly capabilities: readonly string[];
  readonly workerName: string;
  readonly sessionId: string;
}

/** The connected worker sessions, with what each declared in its hello. */
export function workerSessions(sessions: Iterable<Session>): WorkerSession[] {
  return [...sessions].map((s) => ({
    sessionId: s.id,
    name: s.hello.name,
    kind: s.hello.kind,
    namespace: s.hello.namespace,
    taskQueue: s.hello.task_queue,
    concurrency: s.hello.concurrency,
    deployment: s.hello.deployment,
    instanceId: s.hello.instance_id,
    actions: s.hello.actions,
    busy: s.busy,
  }));
}

/** Attempts of a run currently held by a live session, with their capabilities. */
export function liveAttemptsOf(holdings: Holdings, runId: string): LiveAttempt[] {
  const out: LiveAttempt[] = [];
  for (const holding of holdings.ofRun(runId)) {
    const s = holding.session;
    if (s === undefined || s.closed) continue;
    out.push({
      ref: holding.ref,
      capabilities: s.actions.get(holding.action) ?? [],
      workerName: s.hello.name,
      sessionId: s.id,
    });
  }
  return out;
}
