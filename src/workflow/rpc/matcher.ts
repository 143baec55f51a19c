/**
 * The task-queue matcher: the server role that holds worker streams and hands activity
 * attempts to them. Each (namespace, task queue) has the live sessions serving it and a
 * bounded backlog per action; an offered attempt goes at once to a session with a free
 * handler slot that serves its action, or waits in the backlog until one frees up. A
 * session never holds more attempts than the concurrency it declared.
 *
 * Results flow back through the injected `MatcherEvents`: the engine persists them and only
 * then does the matcher acknowledge the result to the worker, so a result is never lost (the
 * worker resends unacknowledged results after a reconnect) and never applied twice (the
 * matcher remembers recently settled attempts, and acknowledges a repeat without reporting
 * it again; the engine is still the final judge, since it knows which attempt is current).
 *
 * A session whose stream ends keeps its attempts "detached": a worker that reconnects lists
 * the attempts it still holds in its hello and they are re-attached to the new session. The
 * matcher never times attempts out itself; start-to-close and heartbeat timeouts are the
 * engine's timers.
 *
 * Session states:  handshake --hello ok--> open --stream ends--> closed
 *                  handshake --refused---> closed (gRPC status with the refusal)
 */

import { randomUUID } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import { decode } from "../../common/decode/index.ts";
import { SkeinError } from "../../common/errors.ts";
import { type Logger, silentLogger } from "../../common/log.ts";
import {
  admitNamespace,
  authenticate,
  type NamespaceGate,
  RpcRefusal,
  type VerifyToken,
} from "./auth.ts";
import { type DecodedHello, helloDecoder } from "./frames.ts";
import {
  type AttemptRef,
  attemptKey,
  FrameBatcher,
  type ServerFrame,
  type WorkerBatch,
  type WorkerFrame,
  type WorkerStream,
} from "./protocol.ts";

/** An attempt offered for dispatch. Durations are milliseconds; 0 means no such timeout. */
export interface TaskOffer {
  readonly ref: AttemptRef;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly workflowId: string;
  readonly action: string;
  readonly inputJson: string;
  readonly startToCloseMs: number;
  readonly heartbeatMs: number;
}

/** Where a result came from. */
export interface ResultContext {
  readonly namespace: string;
  readonly taskQueue: string;
  readonly workerName: string;
  readonly sessionId: string;
}

export interface ActivityFailure {
  readonly code: string;
  readonly message: string;
  readonly nonRetryable: boolean;
}

/**
 * What the matcher reports. `completed` and `failed` may return a promise: the result is
 * acknowledged to the worker once it resolves; a rejection ends the session so the worker
 * resends the result to a healthier server.
 */
export interface MatcherEvents {
  completed(ref: AttemptRef, outputJson: string, ctx: ResultContext): Promise<void> | void;
  failed(ref: AttemptRef, failure: ActivityFailure, ctx: ResultContext): Promise<void> | void;
  heartbeat?(ref: AttemptRef, detailsJson: string, ctx: ResultContext): void;
  /** A session ended while these attempts were assigned to it. */
  detached?(refs: readonly AttemptRef[], ctx: ResultContext): void;
  /** A reconnecting worker declared it still holds these attempts. */
  attached?(refs: readonly AttemptRef[], ctx: ResultContext): void;
  /** An attempt that waited in a backlog was handed to a worker (the outbox frees its claim). */
  assigned?(ref: AttemptRef): void;
}

export interface MatcherOptions {
  readonly verify: VerifyToken;
  readonly namespaceGate: NamespaceGate;
  readonly events: MatcherEvents;
  readonly logger?: Logger;
  /** Attempts waiting for a slot, per (namespace, task queue); past it `offer` refuses. */
  readonly maxBacklogPerQueue?: number;
  /** How long a new stream may take to send its hello. */
  readonly helloTimeoutMs?: number;
  /** How many settled attempts are remembered to recognise resent results. */
  readonly settledMemory?: number;
  /** The agent transport's port, announced in each welcome (0 or absent: no transport). */
  readonly agentPort?: () => number;
}

export type OfferOutcome = "dispatched" | "queued";

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

class Deque<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }
  push(item: T): void {
    this.#items.push(item);
  }
  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }
  remove(match: (item: T) => boolean): T | undefined {
    for (let i = this.#head; i < this.#items.length; i++) {
      const item = this.#items[i];
      if (item !== undefined && match(item)) {
        this.#items.splice(i, 1);
        return item;
      }
    }
    return undefined;
  }
}

interface Session {
  readonly id: string;
  readonly hello: DecodedHello;
  readonly ctx: ResultContext;
  readonly actions: ReadonlyMap<string, readonly string[]>;
  readonly assigned: Map<string, AttemptRef>;
  readonly out: FrameBatcher<ServerFrame>;
  closed: boolean;
}

interface Queue {
  readonly sessions: Session[];
  next: number;
  readonly backlog: Map<string, Deque<TaskOffer>>;
  waiting: number;
}

/**
 * An attempt the matcher holds: waiting (no session, with its offer), assigned (a session),
 * or detached (no session, no offer: its worker's stream ended and may come back).
 */
interface Holding {
  readonly session: Session | undefined;
  readonly offer: TaskOffer | undefined;
  readonly queueKey: string;
  /** The attempt's action, for its capabilities. */
  readonly action: string;
}

/**
 * The attempts held, by attempt key, and indexed by run: listing a run's live attempts
 * (the attempts read, a cancellation) reads that run's keys, not every attempt held.
 */
class Holdings {
  readonly #all = new Map<string, Holding>();
  readonly #byRun = new Map<string, Set<string>>();

  get size(): number {
    return this.#all.size;
  }

  get(key: string): Holding | undefined {
    return this.#all.get(key);
  }

  has(key: string): boolean {
    return this.#all.has(key);
  }

  set(key: string, holding: Holding): void {
    if (!this.#all.has(key)) {
      const run = runOfKey(key);
      let keys = this.#byRun.get(run);
      if (keys === undefined) {
        keys = new Set();
        this.#byRun.set(run, keys);
      }
      keys.add(key);
    }
    this.#all.set(key, holding);
  }

  delete(key: string): boolean {
    if (!this.#all.delete(key)) return false;
    const run = runOfKey(key);
    const keys = this.#byRun.get(run);
    keys?.delete(key);
    if (keys?.size === 0) this.#byRun.delete(run);
    return true;
  }

  /** The keys held for one run. */
  ofRun(runId: string): Iterable<string> {
    return this.#byRun.get(runId) ?? [];
  }
}

/** `run_id/activity_id/attempt` → `run_id`. */
function runOfKey(key: string): string {
  return key.slice(0, key.indexOf("/"));
}

export class Matcher {
  readonly #opts: MatcherOptions;
  readonly #log: Logger;
  readonly #queues = new Map<string, Queue>();
  /** Every attempt handed out or re-attached and not yet settled, by attempt key. */
  readonly #holding = new Holdings();
  readonly #settled = new Set<string>();
  readonly #maxBacklog: number;
  readonly #settledMemory: number;
  readonly #sessions = new Set<Session>();
  /** Attempts the engine released while a live worker still runs them. */
  readonly #released = new Set<string>();

  constructor(options: MatcherOptions) {
    this.#opts = options;
    this.#log = options.logger ?? silentLogger();
    this.#maxBacklog = options.maxBacklogPerQueue ?? 100_000;
    this.#settledMemory = options.settledMemory ?? 65_536;
  }

  /** Offers an attempt for dispatch. Refuses with `task_queue_full` past the backlog bound. */
  offer(task: TaskOffer): OfferOutcome {
    const key = attemptKey(task.ref);
    if (this.#holding.has(key)) {
      throw new SkeinError("attempt_already_dispatched", `attempt ${key} is already dispatched`);
    }
    const qk = queueKey(task.namespace, task.taskQueue);
    const queue = this.#queue(qk);
    const session = pickSession(queue, task.action);
    if (session !== undefined) {
      this.#assign(session, task, qk);
      return "dispatched";
    }
    if (queue.waiting >= this.#maxBacklog) {
      throw new SkeinError(
        "task_queue_full",
        `task queue ${JSON.stringify(task.taskQueue)} in namespace ${JSON.stringify(task.namespace)} has ${queue.waiting} attempts waiting (the bound)`,
        { status: 409 },
      );
    }
    let backlog = queue.backlog.get(task.action);
    if (backlog === undefined) {
      backlog = new Deque();
      queue.backlog.set(task.action, backlog);
    }
    backlog.push(task);
    queue.waiting++;
    this.#holding.set(key, { session: undefined, offer: task, queueKey: qk, action: task.action });
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
    if (holding.session === undefined) {
      const queue = this.#queues.get(holding.queueKey);
      const removed =
        holding.offer &&
        queue?.backlog.get(holding.offer.action)?.remove((t) => t === holding.offer);
      if (removed && queue) queue.waiting--;
      if (removed) {
        this.#holding.delete(key);
        return "withdrawn";
      }
      return "none";
    }
    if (holding.session.closed) return "none";
    holding.session.out.push({ frame: "cancel", cancel: { ref, reason } });
    return "signalled";
  }

  /** Attempts of a run currently held by a live session, with their capabilities. */
  liveAttempts(runId: string): LiveAttempt[] {
    const out: LiveAttempt[] = [];
    for (const key of this.#holding.ofRun(runId)) {
      const holding = this.#holding.get(key)!;
      const s = holding.session;
      if (s === undefined || s.closed) continue;
      const ref = s.assigned.get(key);
      if (ref === undefined || ref.run_id !== runId) continue;
      out.push({
        ref,
        capabilities: s.actions.get(holding.action) ?? [],
        workerName: s.hello.name,
        sessionId: s.id,
      });
    }
    return out;
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
      this.#remember(key);
      return;
    }
    this.#released.add(key);
    this.cancel(ref, reason);
  }

  /** The connected worker sessions, with what each declared in its hello. */
  workers(): WorkerSession[] {
    return [...this.#sessions].map((s) => ({
      sessionId: s.id,
      name: s.hello.name,
      kind: s.hello.kind,
      namespace: s.hello.namespace,
      taskQueue: s.hello.task_queue,
      concurrency: s.hello.concurrency,
      deployment: s.hello.deployment,
      instanceId: s.hello.instance_id,
      actions: s.hello.actions,
      busy: s.assigned.size,
    }));
  }

  /** Counts for status pages and tests. */
  stats(): { sessions: number; holding: number; waiting: number } {
    let waiting = 0;
    for (const q of this.#queues.values()) waiting += q.waiting;
    return { sessions: this.#sessions.size, holding: this.#holding.size, waiting };
  }

  /** The gRPC handler for `WorkerService.Connect`. */
  readonly connect = (stream: WorkerStream): void => {
    let session: Session | undefined;
    let pending: WorkerFrame[] | undefined = [];
    let ended = false;
    const refuse = (error: unknown) => {
      if (ended) return;
      ended = true;
      const refusal =
        error instanceof RpcRefusal
          ? error
          : new RpcRefusal(
              error instanceof SkeinError ? error.code : "internal",
              error instanceof Error ? error.message : String(error),
              error instanceof SkeinError ? grpc.status.INVALID_ARGUMENT : grpc.status.INTERNAL,
            );
      this.#log.info({ code: refusal.code }, `worker stream refused: ${refusal.message}`);
      stream.emit("error", {
        code: refusal.grpcStatus,
        details: `${refusal.code}: ${refusal.message}`,
      });
    };
    const helloTimer = setTimeout(
      () =>
        refuse(
          new RpcRefusal("hello_timeout", "no hello frame in time", grpc.status.DEADLINE_EXCEEDED),
        ),
      this.#opts.helloTimeoutMs ?? 10_000,
    );
    const close = () => {
      clearTimeout(helloTimer);
      ended = true;
      if (session !== undefined) this.#closeSession(session);
    };
    stream.on("error", () => close());
    stream.on("cancelled", () => close());
    stream.on("close", () => close());
    stream.on("end", () => {
      close();
      stream.end();
    });

    const open = async (hello: WorkerFrame) => {
      if (hello.frame !== "hello") {
        throw new RpcRefusal(
          "hello_expected",
          "the first frame must be hello",
          grpc.status.INVALID_ARGUMENT,
        );
      }
      const principal = await authenticate(this.#opts.verify, stream.metadata);
      const decoded = decode(helloDecoder, hello.hello, { parent: undefined, key: "hello" });
      if (!decoded.ok) {
        throw new RpcRefusal("invalid_hello", decoded.error.message, grpc.status.INVALID_ARGUMENT);
      }
      await admitNamespace(principal, decoded.value.namespace, this.#opts.namespaceGate);
      return decoded.value;
    };

    stream.on("data", (batch: WorkerBatch) => {
      if (ended) return;
      if (pending !== undefined) {
        const first = pending.length === 0;
        pending.push(...batch.frames);
        if (!first || pending.length === 0) return;
        const hello = pending.shift()!;
        open(hello).then(
          (decoded) => {
            clearTimeout(helloTimer);
            if (ended) return;
            session = this.#openSession(stream, decoded);
            const queued = pending ?? [];
            pending = undefined;
            for (const frame of queued) this.#onFrame(session, frame, stream);
          },
          (error: unknown) => {
            clearTimeout(helloTimer);
            refuse(error);
          },
        );
        return;
      }
      if (session === undefined) return;
      for (const frame of batch.frames) this.#onFrame(session, frame, stream);
    });
  };

  /** Writes every session's queued frames now (before a blocking commit, say). */
  flush(): void {
    for (const s of this.#sessions) s.out.flush();
  }

  /** Ends every stream (server shutdown). */
  closeAll(): void {
    for (const s of this.#sessions) this.#closeSession(s);
  }

  #queue(key: string): Queue {
    let queue = this.#queues.get(key);
    if (queue === undefined) {
      queue = { sessions: [], next: 0, backlog: new Map(), waiting: 0 };
      this.#queues.set(key, queue);
    }
    return queue;
  }

  #openSession(stream: WorkerStream, hello: DecodedHello): Session {
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
      assigned: new Map(),
      out: new FrameBatcher<ServerFrame>((frames) => {
        if (!session.closed) stream.write({ frames });
      }),
      closed: false,
    };
    this.#sessions.add(session);
    session.out.push({
      frame: "welcome",
      welcome: { session_id: id, agent_port: this.#opts.agentPort?.() ?? 0 },
    });
    const qk = queueKey(hello.namespace, hello.task_queue);
    const queue = this.#queue(qk);
    // Re-attach: the attempts this process still holds count against its slots and their
    // results are accepted from this session.
    const attached: AttemptRef[] = [];
    for (const { ref, action } of hello.running) {
      const key = attemptKey(ref);
      const prior = this.#holding.get(key);
      // Assigned to another live worker since: that one's result counts, not this one's.
      if (prior?.session !== undefined && !prior.session.closed) continue;
      if (prior?.session === undefined && prior?.offer !== undefined) {
        // Offered again (after a server restart) and still waiting: the worker that already
        // runs it keeps it, and the waiting copy is withdrawn.
        const backlog = queue.backlog.get(prior.offer.action);
        if (backlog?.remove((t) => t === prior.offer) !== undefined) queue.waiting--;
      }
      session.assigned.set(key, ref);
      this.#holding.set(key, { session, offer: prior?.offer, queueKey: qk, action });
      attached.push(ref);
    }
    if (attached.length > 0) this.#opts.events.attached?.(attached, session.ctx);
    queue.sessions.push(session);
    this.#log.info(
      { worker: hello.name, namespace: hello.namespace, queue: hello.task_queue, session: id },
      "worker connected",
    );
    this.#drain(session, queue, qk);
    return session;
  }

  #closeSession(session: Session): void {
    if (session.closed) return;
    session.closed = true;
    session.out.clear();
    this.#sessions.delete(session);
    const qk = queueKey(session.hello.namespace, session.hello.task_queue);
    const queue = this.#queues.get(qk);
    if (queue !== undefined) {
      const i = queue.sessions.indexOf(session);
      if (i >= 0) queue.sessions.splice(i, 1);
    }
    const detached: AttemptRef[] = [];
    for (const [key, ref] of session.assigned) {
      const holding = this.#holding.get(key);
      if (holding?.session === session && this.#released.delete(key)) {
        // The engine already gave it up: nothing to keep for a re-attach.
        this.#holding.delete(key);
        this.#remember(key);
        continue;
      }
      if (holding?.session === session) {
        // Kept (without a session) so a reconnecting worker can re-attach it.
        this.#holding.set(key, {
          session: undefined,
          offer: undefined,
          queueKey: qk,
          action: holding.action,
        });
        detached.push(ref);
      }
    }
    session.assigned.clear();
    this.#log.info(
      { worker: session.hello.name, session: session.id, detached: detached.length },
      "worker disconnected",
    );
    if (detached.length > 0) this.#opts.events.detached?.(detached, session.ctx);
  }

  #assign(session: Session, task: TaskOffer, qk: string): void {
    const key = attemptKey(task.ref);
    session.assigned.set(key, task.ref);
    this.#holding.set(key, { session, offer: task, queueKey: qk, action: task.action });
    session.out.push({
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
  #drain(session: Session, queue: Queue, qk: string): void {
    if (queue.waiting === 0) return;
    for (const action of session.actions.keys()) {
      const backlog = queue.backlog.get(action);
      if (backlog === undefined) continue;
      while (backlog.size > 0 && session.assigned.size < session.hello.concurrency) {
        const task = backlog.shift()!;
        queue.waiting--;
        this.#assign(session, task, qk);
        this.#opts.events.assigned?.(task.ref);
      }
      if (session.assigned.size >= session.hello.concurrency) return;
    }
  }

  #onFrame(session: Session, frame: WorkerFrame, stream: WorkerStream): void {
    switch (frame.frame) {
      case "hello":
        this.#abort(stream, session, "a session sends one hello");
        return;
      case "heartbeat": {
        const ref = frame.heartbeat.ref;
        if (ref === null || ref === undefined) return;
        if (session.assigned.has(attemptKey(ref))) {
          this.#opts.events.heartbeat?.(ref, frame.heartbeat.details_json, session.ctx);
        }
        return;
      }
      case "completion":
        this.#settle(session, frame.completion.ref, stream, (ref) =>
          this.#opts.events.completed(ref, frame.completion.output_json, session.ctx),
        );
        return;
      case "failure":
        this.#settle(session, frame.failure.ref, stream, (ref) =>
          this.#opts.events.failed(
            ref,
            {
              code: frame.failure.code || "handler_error",
              message: frame.failure.message,
              nonRetryable: frame.failure.non_retryable,
            },
            session.ctx,
          ),
        );
        return;
    }
  }

  #settle(
    session: Session,
    ref: AttemptRef | null | undefined,
    stream: WorkerStream,
    report: (ref: AttemptRef) => Promise<void> | void,
  ): void {
    if (ref === null || ref === undefined) {
      this.#abort(stream, session, "a result without ref");
      return;
    }
    const key = attemptKey(ref);
    const ack = () => session.out.push({ frame: "ack", ack: { ref } });
    if (!session.assigned.has(key)) {
      // A resend of a result already reported, or one this session never held: acknowledged
      // so the worker forgets it, never reported twice.
      if (!this.#settled.has(key)) {
        this.#log.warn(
          { attempt: key, session: session.id },
          "result for an attempt this session does not hold; dropped",
        );
      }
      ack();
      return;
    }
    session.assigned.delete(key);
    this.#holding.delete(key);
    this.#remember(key);
    const qk = queueKey(session.hello.namespace, session.hello.task_queue);
    const queue = this.#queues.get(qk);
    if (queue !== undefined && !session.closed) this.#drain(session, queue, qk);
    if (this.#released.delete(key)) {
      ack();
      return;
    }
    let outcome: Promise<void> | void;
    try {
      outcome = report(ref);
    } catch (error) {
      this.#settled.delete(key);
      this.#abort(stream, session, `result not accepted: ${String(error)}`);
      return;
    }
    if (!(outcome instanceof Promise)) {
      ack();
      return;
    }
    outcome.then(ack, (error: unknown) => {
      this.#settled.delete(key);
      this.#abort(stream, session, `result not accepted: ${String(error)}`);
    });
  }

  #remember(key: string): void {
    this.#settled.add(key);
    if (this.#settled.size > this.#settledMemory) {
      const oldest = this.#settled.values().next().value;
      if (oldest !== undefined) this.#settled.delete(oldest);
    }
  }

  #abort(stream: WorkerStream, session: Session, message: string): void {
    this.#log.warn({ session: session.id }, `worker stream ended: ${message}`);
    this.#closeSession(session);
    stream.emit("error", { code: grpc.status.UNAVAILABLE, details: `stream_aborted: ${message}` });
  }
}

function queueKey(namespace: string, taskQueue: string): string {
  return `${namespace}\u0000${taskQueue}`;
}

function pickSession(queue: Queue, action: string): Session | undefined {
  const n = queue.sessions.length;
  for (let i = 0; i < n; i++) {
    const s = queue.sessions[(queue.next + i) % n]!;
    if (s.assigned.size < s.hello.concurrency && s.actions.has(action)) {
      queue.next = (queue.next + i + 1) % n;
      return s;
    }
  }
  return undefined;
}
