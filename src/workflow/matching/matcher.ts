/**
 * Matching (Temporal's name for the role): the server role that holds worker sessions and
 * hands activity attempts to them. Each (namespace, task queue) has the live sessions
 * serving it and a bounded backlog per action (task-queue.ts); an offered attempt goes at
 * once to a session with a free handler slot that serves its action, or waits in the
 * backlog until one frees up. A session never holds more attempts than its concurrency.
 *
 * Results flow back through the injected `MatcherEvents`: the engine persists them and only
 * then does the matcher acknowledge the result to the worker, so a result is never lost (the
 * worker resends unacknowledged results after a reconnect) and never applied twice (the
 * matcher remembers recently settled attempts, and acknowledges a repeat without reporting
 * it again; the engine is still the final judge, since it knows which attempt is current).
 *
 * The matcher speaks no gRPC: a transport adapter (rpc/worker-stream.ts) authenticates each
 * stream, decodes its frames (protocol/worker-stream/decode.ts), and hands the matcher the
 * hello (`open`, with a `SessionSink` for the frames going out), each later frame
 * (`receive`) and the stream's end (`close`). A refusal thrown here (a StreamRefusal of the
 * catalogue, src/workflow/errors.ts) ends that stream.
 *
 * A session whose stream ends keeps its attempts "detached": a worker that reconnects lists
 * the attempts it still holds in its hello and they are re-attached to the new session by the
 * rules of reattach.ts. Detached attempts are the engine's to time out (its re-attach grace);
 * the matcher forgets any still detached after `detachedTtlMs`, so attempts the engine never
 * tracked are not kept forever. Status reads are views.ts; settled memory is settled.ts; how
 * a result frame settles its attempt (acknowledged, reported or not) is results.ts.
 *
 * Session states (the handshake is the adapter's):
 *   handshake --hello ok (open)--> open --stream ends (close)--> closed
 *   handshake --refused---> closed (the adapter ends the stream with the refusal)
 */

import { randomUUID } from "node:crypto";
import { type Logger, silentLogger } from "../../common/log.ts";
import { type AttemptRef, attemptKey } from "../../protocol/attempt.ts";
import type { DecodedHello } from "../../protocol/worker-stream/decode.ts";
import type { WorkerFrame } from "../../protocol/worker-stream/frames.ts";
import type { MatcherEvents, OfferOutcome, TaskOffer } from "../engine/dispatcher.ts";
import { attemptFailure, engineFault } from "../errors.ts";
import { Holding, Holdings } from "./holdings.ts";
import { checkReattach, type ReattachState, reattach } from "./reattach.ts";
import { type ResultState, receiveFrame } from "./results.ts";
import type { Session, SessionSink } from "./session.ts";
import { SettledMemory } from "./settled.ts";
import { enqueue, pickSession, type TaskQueue, TaskQueues, withdraw } from "./task-queue.ts";
import { type LiveAttempt, liveAttemptsOf, type WorkerSession, workerSessions } from "./views.ts";

export type { Session, SessionSink } from "./session.ts";
export type { LiveAttempt, WorkerSession } from "./views.ts";

/**
 * How long an attempt stays detached (its worker's stream ended) before the matcher forgets
 * it. The engine times detached attempts out after its re-attach grace (10 s) and releases
 * them; this is the backstop for attempts the engine never tracked, well past that grace.
 */
export const DETACHED_TTL_MS = 60_000;

export interface MatcherOptions {
  readonly events: MatcherEvents;
  readonly logger?: Logger;
  /** Attempts waiting for a slot, per (namespace, task queue); past it `offer` refuses. */
  readonly maxBacklogPerQueue?: number;
  /** How long a detached attempt is kept for its worker to re-attach (DETACHED_TTL_MS). */
  readonly detachedTtlMs?: number;
  /** How many settled attempts are remembered to recognise resent results. */
  readonly settledMemory?: number;
  /** The agent transport's port, announced in each welcome (0 or absent: no transport). */
  readonly agentPort?: () => number;
}

export class Matcher {
  readonly #opts: MatcherOptions;
  readonly #log: Logger;
  readonly #queues = new TaskQueues();
  /** Every attempt handed out or re-attached and not yet settled, by attempt key. */
  readonly #holding = new Holdings();
  readonly #settled: SettledMemory;
  readonly #reattachState: ReattachState;
  readonly #results: ResultState;
  readonly #maxBacklog: number;
  readonly #detachedTtlMs: number;
  readonly #sessions = new Set<Session>();

  constructor(options: MatcherOptions) {
    this.#opts = options;
    this.#log = options.logger ?? silentLogger();
    this.#maxBacklog = options.maxBacklogPerQueue ?? 100_000;
    this.#settled = new SettledMemory(options.settledMemory ?? 65_536);
    this.#detachedTtlMs = options.detachedTtlMs ?? DETACHED_TTL_MS;
    this.#reattachState = {
      holding: this.#holding,
      settled: this.#settled,
      owner: options.events.owner,
      log: this.#log,
    };
    this.#results = {
      events: options.events,
      holding: this.#holding,
      settled: this.#settled,
      log: this.#log,
      drain: (session, queue) => this.#drain(session, queue),
      close: (session) => this.close(session),
    };
  }

  /** Offers an attempt for dispatch. Refuses with `task_queue_full` past the backlog bound. */
  offer(task: TaskOffer): OfferOutcome {
    const key = attemptKey(task.ref);
    if (this.#holding.has(key)) {
      throw engineFault("attempt_already_dispatched", `attempt ${key} is already dispatched`);
    }
    const queue = this.#queues.get(task.namespace, task.taskQueue);
    const session = pickSession(queue, task.action);
    const offeredAt = performance.now();
    if (session !== undefined) {
      this.#assign(session, task, queue, offeredAt);
      return "dispatched";
    }
    if (queue.waiting >= this.#maxBacklog) {
      throw attemptFailure(
        "task_queue_full",
        `task queue ${JSON.stringify(task.taskQueue)} in namespace ${JSON.stringify(task.namespace)} has ${queue.waiting} attempts waiting (the bound)`,
      );
    }
    enqueue(queue, task);
    this.#holding.set(key, new Holding(task.ref, undefined, task, queue, task.action, offeredAt));
    return "queued";
  }

  /**
   * Cancels an attempt: a waiting one is withdrawn, an assigned one gets a cancel-activity
   * frame. Returns where it was found (`"none"` when the matcher does not hold it).
   */
  cancel(ref: AttemptRef, reason: string): "withdrawn" | "signalled" | "none" {
    const key = attemptKey(ref);
    const holding = this.#holding.get(key);
    if (holding === undefined) return "none";
    if (holding.session === undefined) return this.withdraw(ref) ? "withdrawn" : "none";
    if (holding.session.closed) return "none";
    holding.session.sink.push({ frame: "cancel", cancel: { ref, reason } });
    return "signalled";
  }

  /** Takes back an attempt still waiting for a worker; false when a worker holds it. */
  withdraw(ref: AttemptRef): boolean {
    const holding = this.#holding.get(attemptKey(ref));
    if (holding === undefined || holding.session !== undefined || holding.offer === undefined) {
      return false;
    }
    if (!withdraw(holding.queue, holding.offer)) return false;
    this.#holding.delete(attemptKey(ref));
    this.#queues.prune(holding.queue);
    return true;
  }

  /** Attempts of a run currently held by a live session, with their capabilities. */
  liveAttempts(runId: string): LiveAttempt[] {
    return liveAttemptsOf(this.#holding, runId);
  }

  /**
   * The engine gave up on an attempt (timed out, superseded by a retry, run cancelled). A
   * detached or waiting attempt is forgotten; one a live worker still runs is told to stop and
   * keeps its slot until the worker reports, and that late result is acknowledged but not
   * reported.
   */
  release(ref: AttemptRef, reason: string): void {
    const key = attemptKey(ref);
    const holding = this.#holding.get(key);
    if (holding === undefined) return;
    if (holding.session === undefined) {
      if (this.cancel(ref, reason) === "none") this.#holding.delete(key);
      this.#settled.remember(key);
      return;
    }
    holding.released = true;
    this.cancel(ref, reason);
  }

  /** The connected worker sessions, with what each declared in its hello. */
  workers(): WorkerSession[] {
    return workerSessions(this.#sessions);
  }

  /** Attempts waiting for a free slot in one task queue, per action (empty when none). */
  backlog(namespace: string, taskQueue: string): { action: string; waiting: number }[] {
    const queue = this.#queues.find(namespace, taskQueue);
    if (queue === undefined) return [];
    return [...queue.backlog].map(([action, d]) => ({ action, waiting: d.size }));
  }

  /** Counts for status pages and tests. */
  stats(): { sessions: number; holding: number; waiting: number } {
    return {
      sessions: this.#sessions.size,
      holding: this.#holding.size,
      waiting: this.#queues.waiting(),
    };
  }

  /** Writes every session's queued frames now (before a blocking commit, say). */
  flush(): void {
    for (const s of this.#sessions) s.sink.flush();
  }

  /** Ends every stream (server shutdown). */
  closeAll(): void {
    for (const s of this.#sessions) this.close(s);
  }

  /**
   * Opens a session for a hello its transport has authenticated: checks the attempts it
   * lists (a refusal is thrown as a StreamRefusal, `reattach_refused`), welcomes it, re-attaches
   * what it still holds and fills its free slots from the backlog.
   */
  open(hello: DecodedHello, sink: SessionSink): Session {
    checkReattach(this.#reattachState, hello);
    const id = randomUUID();
    const actions = new Map(hello.actions.map((a) => [a.action, a.capabilities] as const));
    const session: Session = {
      id,
      hello,
      ctx: {
        namespace: hello.namespace,
        taskQueue: hello.task_queue,
        workerName: hello.name,
        sessionId: id,
      },
      actions,
      busy: 0,
      sink,
      closed: false,
    };
    this.#sessions.add(session);
    session.sink.push({
      frame: "welcome",
      welcome: { session_id: id, agent_port: this.#opts.agentPort?.() ?? 0 },
    });
    const queue = this.#queues.get(hello.namespace, hello.task_queue);
    const attached = reattach(this.#reattachState, session, queue);
    if (attached.length > 0) this.#opts.events.attached?.(attached, session.ctx);
    queue.sessions.push(session);
    this.#log.info(
      { worker: hello.name, namespace: hello.namespace, queue: hello.task_queue, session: id },
      "worker connected",
    );
    this.#drain(session, queue);
    return session;
  }

  /** The session's stream ended: its attempts are kept detached for a re-attach. */
  close(session: Session): void {
    if (session.closed) return;
    session.closed = true;
    session.sink.closed();
    this.#sessions.delete(session);
    const queue = this.#queues.find(session.hello.namespace, session.hello.task_queue);
    if (queue !== undefined) {
      const i = queue.sessions.indexOf(session);
      if (i >= 0) queue.sessions.splice(i, 1);
    }
    const detached: AttemptRef[] = [];
    const kept: [string, Holding][] = [];
    for (const [key, holding] of this.#holding.ofSession(session)) {
      if (holding.released) {
        // The engine already gave it up: nothing to keep for a re-attach.
        this.#holding.delete(key);
        this.#settled.remember(key);
        continue;
      }
      // Kept (without a session) so a reconnecting worker can re-attach it.
      const orphan = new Holding(
        holding.ref,
        undefined,
        undefined,
        holding.queue,
        holding.action,
        holding.offeredAt,
      );
      this.#holding.set(key, orphan);
      kept.push([key, orphan]);
      detached.push(holding.ref);
    }
    if (queue !== undefined) this.#queues.prune(queue);
    if (kept.length > 0) this.#expire(kept);
    this.#log.info(
      { worker: session.hello.name, session: session.id, detached: detached.length },
      "worker disconnected",
    );
    if (detached.length > 0) this.#opts.events.detached?.(detached, session.ctx);
  }

  /** Forgets detached attempts still detached after the TTL (see DETACHED_TTL_MS). */
  #expire(kept: readonly [string, Holding][]): void {
    const timer = setTimeout(() => {
      for (const [key, orphan] of kept) {
        if (this.#holding.get(key) === orphan) this.#holding.delete(key);
      }
    }, this.#detachedTtlMs);
    timer.unref();
  }

  #assign(session: Session, task: TaskOffer, queue: TaskQueue, offeredAt: number): void {
    this.#holding.set(
      attemptKey(task.ref),
      new Holding(task.ref, session, task, queue, task.action, offeredAt),
    );
    session.sink.push({
      frame: "task",
      task: {
        ref: task.ref,
        namespace: task.namespace,
        workflow_id: task.workflowId,
        action: task.action,
        input_json: task.inputJson,
        start_to_close_ms: task.startToCloseMs,
        heartbeat_ms: task.heartbeatMs,
      },
    });
  }

  /** Fills a session's free slots from the backlog of the actions it serves. */
  #drain(session: Session, queue: TaskQueue): void {
    if (queue.waiting === 0) return;
    for (const action of session.actions.keys()) {
      const backlog = queue.backlog.get(action);
      if (backlog === undefined) continue;
      while (backlog.size > 0 && session.busy < session.hello.concurrency) {
        const task = backlog.shift()!;
        queue.waiting--;
        const waited = this.#holding.get(attemptKey(task.ref));
        this.#assign(session, task, queue, waited?.offeredAt ?? Number.NaN);
        this.#opts.events.assigned?.(task.ref);
      }
      if (session.busy >= session.hello.concurrency) return;
    }
  }

  /** One decoded frame of an open session. Throws a StreamRefusal to end the stream. */
  receive(session: Session, frame: WorkerFrame): void {
    receiveFrame(this.#results, session, frame);
  }
}
