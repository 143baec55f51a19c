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
 * Every message a worker sends is decoded (protocol/worker-stream/decode.ts) before anything here reads it; a bad
 * one ends that stream with a named refusal (`invalid_frame: <path>: <reason>`).
 *
 * A session whose stream ends keeps its attempts "detached": a worker that reconnects lists
 * the attempts it still holds in its hello and they are re-attached to the new session, but
 * only attempts of the session's own namespace and task queue (an attempt held for another
 * one refuses the hello), at most as many as its concurrency, and only attempts the matcher
 * holds or the engine says are current (`owner`): a hello cannot make the matcher keep
 * attempts nobody offered. Detached attempts are the engine's to time out (its re-attach
 * grace); the matcher forgets any still detached after `detachedTtlMs`, so attempts the
 * engine never tracked are not kept forever.
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
  type DecodedHello,
  INVALID_HELLO,
  MAX_FRAMES_PER_BATCH,
  UndecodableBatch,
  workerBatchDecoder,
} from "../../protocol/worker-stream/decode.ts";
import {
  type AttemptRef,
  attemptKey,
  FrameBatcher,
  type ServerFrame,
  type WorkerFrame,
  type WorkerStream,
} from "../../protocol/worker-stream/index.ts";
import type {
  MatcherEvents,
  OfferOutcome,
  ResultContext,
  TaskOffer,
} from "../engine/dispatcher.ts";
import {
  admitNamespace,
  authenticate,
  type NamespaceGate,
  RpcRefusal,
  type VerifyToken,
} from "./auth.ts";

/**
 * How long an attempt stays detached (its worker's stream ended) before the matcher forgets
 * it. The engine times detached attempts out after its re-attach grace (10 s) and releases
 * them; this is the backstop for attempts the engine never tracked, well past that grace.
 */
export const DETACHED_TTL_MS = 60_000;
/** How long a new stream may take to send its hello. */
export const HELLO_TIMEOUT_MS = 10_000;

export interface MatcherOptions {
  readonly verify: VerifyToken;
  readonly namespaceGate: NamespaceGate;
  readonly events: MatcherEvents;
  readonly logger?: Logger;
  /** Attempts waiting for a slot, per (namespace, task queue); past it `offer` refuses. */
  readonly maxBacklogPerQueue?: number;
  /** How long a new stream may take to send its hello (HELLO_TIMEOUT_MS). */
  readonly helloTimeoutMs?: number;
  /** How long a detached attempt is kept for its worker to re-attach (DETACHED_TTL_MS). */
  readonly detachedTtlMs?: number;
  /** How many settled attempts are remembered to recognise resent results. */
  readonly settledMemory?: number;
  /** The agent transport's port, announced in each welcome (0 or absent: no transport). */
  readonly agentPort?: () => number;
}

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
  readonly stream: WorkerStream;
  closed: boolean;
}

/** One (namespace, task queue): keyed by both names in nested maps, never a joined string. */
interface Queue {
  readonly namespace: string;
  readonly name: string;
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
  /** The queue it was offered in or re-attached from (possibly pruned since: compare names). */
  readonly queue: Queue;
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
  /** Namespace → task queue → queue. */
  readonly #queues = new Map<string, Map<string, Queue>>();
  /** Every attempt handed out or re-attached and not yet settled, by attempt key. */
  readonly #holding = new Holdings();
  readonly #settled = new Set<string>();
  readonly #maxBacklog: number;
  readonly #settledMemory: number;
  readonly #detachedTtlMs: number;
  readonly #sessions = new Set<Session>();
  /** Attempts the engine released while a live worker still runs them. */
  readonly #released = new Set<string>();

  constructor(options: MatcherOptions) {
    this.#opts = options;
    this.#log = options.logger ?? silentLogger();
    this.#maxBacklog = options.maxBacklogPerQueue ?? 100_000;
    this.#settledMemory = options.settledMemory ?? 65_536;
    this.#detachedTtlMs = options.detachedTtlMs ?? DETACHED_TTL_MS;
  }

  /** Offers an attempt for dispatch. Refuses with `task_queue_full` past the backlog bound. */
  offer(task: TaskOffer): OfferOutcome {
    const key = attemptKey(task.ref);
    if (this.#holding.has(key)) {
      throw new SkeinError("attempt_already_dispatched", `attempt ${key} is already dispatched`);
    }
    const queue = this.#queue(task.namespace, task.taskQueue);
    const session = pickSession(queue, task.action);
    if (session !== undefined) {
      this.#assign(session, task, queue);
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
    this.#holding.set(key, { session: undefined, offer: task, queue, action: task.action });
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
      if (holding.offer === undefined || !withdraw(holding.queue, holding.offer)) return "none";
      this.#holding.delete(key);
      this.#prune(holding.queue);
      return "withdrawn";
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
    for (const queues of this.#queues.values()) {
      for (const q of queues.values()) waiting += q.waiting;
    }
    return { sessions: this.#sessions.size, holding: this.#holding.size, waiting };
  }

  /** The gRPC handler for `WorkerService.Connect`. */
  readonly connect = (stream: WorkerStream): void => {
    let session: Session | undefined;
    /** Frames that arrived after the hello, while it is being checked. */
    let pending: WorkerFrame[] | undefined;
    let ended = false;
    const refuse = (error: unknown) => {
      if (ended) return;
      ended = true;
      const refusal = asRefusal(error);
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
      this.#opts.helloTimeoutMs ?? HELLO_TIMEOUT_MS,
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

    const open = async (hello: DecodedHello) => {
      const principal = await authenticate(this.#opts.verify, stream.metadata);
      await admitNamespace(principal, hello.namespace, this.#opts.namespaceGate);
    };
    const welcome = (hello: DecodedHello) => {
      clearTimeout(helloTimer);
      if (ended) return;
      this.#checkReattach(hello);
      session = this.#openSession(stream, hello);
      const queued = pending ?? [];
      pending = undefined;
      for (const frame of queued) this.#onFrame(session, frame);
    };

    const receive = (message: unknown) => {
      const frames = decodeBatch(message);
      if (session !== undefined) {
        for (const frame of frames) this.#onFrame(session, frame);
        return;
      }
      if (pending !== undefined) {
        if (pending.length + frames.length > MAX_FRAMES_PER_BATCH) {
          throw invalidFrame(`sent more than ${MAX_FRAMES_PER_BATCH} frames before the welcome`);
        }
        pending.push(...frames);
        return;
      }
      // An empty batch before the hello changes nothing.
      if (frames.length === 0) return;
      const [first, ...rest] = frames;
      if (first!.frame !== "hello") {
        throw new RpcRefusal(
          "hello_expected",
          "the first frame must be hello",
          grpc.status.INVALID_ARGUMENT,
        );
      }
      const hello = first!.hello;
      pending = rest;
      open(hello).then(
        () => {
          try {
            welcome(hello);
          } catch (error) {
            refuse(error);
          }
        },
        (error: unknown) => {
          clearTimeout(helloTimer);
          refuse(error);
        },
      );
    };

    stream.on("data", (message: unknown) => {
      if (ended) return;
      try {
        receive(message);
      } catch (error) {
        refuse(error);
      }
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

  #queue(namespace: string, name: string): Queue {
    let queues = this.#queues.get(namespace);
    if (queues === undefined) {
      queues = new Map();
      this.#queues.set(namespace, queues);
    }
    let queue = queues.get(name);
    if (queue === undefined) {
      queue = { namespace, name, sessions: [], next: 0, backlog: new Map(), waiting: 0 };
      queues.set(name, queue);
    }
    return queue;
  }

  /** Forgets a queue nothing uses any more: worker-chosen queue names do not accumulate. */
  #prune(queue: Queue): void {
    if (queue.sessions.length > 0 || queue.waiting > 0) return;
    const queues = this.#queues.get(queue.namespace);
    if (queues?.get(queue.name) !== queue) return;
    queues.delete(queue.name);
    if (queues.size === 0) this.#queues.delete(queue.namespace);
  }

  /**
   * Refuses a hello that lists an attempt of another namespace or task queue: one the
   * matcher holds for another queue, or one the engine places elsewhere.
   */
  #checkReattach(hello: DecodedHello): void {
    hello.running.forEach(({ ref }, i) => {
      const key = attemptKey(ref);
      if (this.#settled.has(key)) return;
      const prior = this.#holding.get(key);
      const owner = prior === undefined ? this.#opts.events.owner?.(ref) : undefined;
      const place =
        prior !== undefined
          ? { namespace: prior.queue.namespace, taskQueue: prior.queue.name }
          : owner;
      if (place === undefined) return;
      if (place.namespace === hello.namespace && place.taskQueue === hello.task_queue) return;
      throw new RpcRefusal(
        "reattach_refused",
        `hello.running[${i}]: attempt ${key} is not an attempt of namespace ${JSON.stringify(hello.namespace)}, task queue ${JSON.stringify(hello.task_queue)}`,
        grpc.status.PERMISSION_DENIED,
      );
    });
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
      stream,
      closed: false,
    };
    this.#sessions.add(session);
    session.out.push({
      frame: "welcome",
      welcome: { session_id: id, agent_port: this.#opts.agentPort?.() ?? 0 },
    });
    const queue = this.#queue(hello.namespace, hello.task_queue);
    const attached = this.#reattach(session, queue);
    if (attached.length > 0) this.#opts.events.attached?.(attached, session.ctx);
    queue.sessions.push(session);
    this.#log.info(
      { worker: hello.name, namespace: hello.namespace, queue: hello.task_queue, session: id },
      "worker connected",
    );
    this.#drain(session, queue);
    return session;
  }

  /**
   * Re-attach: the attempts this process still holds (checked by #checkReattach to be of its
   * queue) count against its slots, at most its concurrency, and their results are accepted
   * from this session. Settled ones need nothing (a resent result is acknowledged); one the
   * matcher does not hold is taken only when the engine says it is current (or, without an
   * engine, on the hello's word).
   */
  #reattach(session: Session, queue: Queue): AttemptRef[] {
    const attached: AttemptRef[] = [];
    for (const { ref, action } of session.hello.running) {
      if (attached.length >= session.hello.concurrency) {
        this.#log.warn(
          { session: session.id, listed: session.hello.running.length },
          "hello lists more attempts than its concurrency; the rest are not re-attached",
        );
        break;
      }
      const key = attemptKey(ref);
      if (this.#settled.has(key) || session.assigned.has(key)) continue;
      const prior = this.#holding.get(key);
      // Assigned to another live worker since: that one's result counts, not this one's.
      if (prior?.session !== undefined && !prior.session.closed) continue;
      let held = action;
      if (prior !== undefined) {
        held = prior.action;
        // Offered again (after a server restart) and still waiting: the worker that already
        // runs it keeps it, and the waiting copy is withdrawn.
        if (prior.offer !== undefined) withdraw(prior.queue, prior.offer);
      } else if (this.#opts.events.owner !== undefined) {
        const owner = this.#opts.events.owner(ref);
        if (owner === undefined) continue;
        held = owner.action;
      }
      session.assigned.set(key, ref);
      this.#holding.set(key, { session, offer: prior?.offer, queue, action: held });
      attached.push(ref);
    }
    return attached;
  }

  #closeSession(session: Session): void {
    if (session.closed) return;
    session.closed = true;
    session.out.clear();
    this.#sessions.delete(session);
    const queue = this.#queues.get(session.hello.namespace)?.get(session.hello.task_queue);
    if (queue !== undefined) {
      const i = queue.sessions.indexOf(session);
      if (i >= 0) queue.sessions.splice(i, 1);
    }
    const detached: AttemptRef[] = [];
    const kept: [string, Holding][] = [];
    for (const [key, ref] of session.assigned) {
      const holding = this.#holding.get(key);
      if (holding?.session !== session) continue;
      if (this.#released.delete(key)) {
        // The engine already gave it up: nothing to keep for a re-attach.
        this.#holding.delete(key);
        this.#remember(key);
        continue;
      }
      // Kept (without a session) so a reconnecting worker can re-attach it.
      const orphan: Holding = {
        session: undefined,
        offer: undefined,
        queue: holding.queue,
        action: holding.action,
      };
      this.#holding.set(key, orphan);
      kept.push([key, orphan]);
      detached.push(ref);
    }
    session.assigned.clear();
    if (queue !== undefined) this.#prune(queue);
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

  #assign(session: Session, task: TaskOffer, queue: Queue): void {
    const key = attemptKey(task.ref);
    session.assigned.set(key, task.ref);
    this.#holding.set(key, { session, offer: task, queue, action: task.action });
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
  #drain(session: Session, queue: Queue): void {
    if (queue.waiting === 0) return;
    for (const action of session.actions.keys()) {
      const backlog = queue.backlog.get(action);
      if (backlog === undefined) continue;
      while (backlog.size > 0 && session.assigned.size < session.hello.concurrency) {
        const task = backlog.shift()!;
        queue.waiting--;
        this.#assign(session, task, queue);
        this.#opts.events.assigned?.(task.ref);
      }
      if (session.assigned.size >= session.hello.concurrency) return;
    }
  }

  /** One decoded frame of an open session. Throws an RpcRefusal to end the stream. */
  #onFrame(session: Session, frame: WorkerFrame): void {
    if (session.closed) return;
    switch (frame.frame) {
      case "hello":
        throw invalidFrame("hello: a session sends one hello");
      case "heartbeat": {
        const ref = frame.heartbeat.ref;
        if (session.assigned.has(attemptKey(ref))) {
          this.#opts.events.heartbeat?.(ref, frame.heartbeat.details_json, session.ctx);
        }
        return;
      }
      case "completion":
        this.#settle(session, frame.completion.ref, (ref) =>
          this.#opts.events.completed(ref, frame.completion.output_json, session.ctx),
        );
        return;
      case "failure":
        this.#settle(session, frame.failure.ref, (ref) =>
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
    ref: AttemptRef,
    report: (ref: AttemptRef) => Promise<void> | void,
  ): void {
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
    const queue = this.#holding.get(key)?.queue;
    this.#holding.delete(key);
    this.#remember(key);
    if (queue !== undefined && !session.closed) this.#drain(session, queue);
    if (this.#released.delete(key)) {
      ack();
      return;
    }
    let outcome: Promise<void> | void;
    try {
      outcome = report(ref);
    } catch (error) {
      this.#settled.delete(key);
      this.#abort(session, `result not accepted: ${String(error)}`);
      return;
    }
    if (!(outcome instanceof Promise)) {
      ack();
      return;
    }
    outcome.then(ack, (error: unknown) => {
      this.#settled.delete(key);
      this.#abort(session, `result not accepted: ${String(error)}`);
    });
  }

  #remember(key: string): void {
    this.#settled.add(key);
    if (this.#settled.size > this.#settledMemory) {
      const oldest = this.#settled.values().next().value;
      if (oldest !== undefined) this.#settled.delete(oldest);
    }
  }

  #abort(session: Session, message: string): void {
    this.#log.warn({ session: session.id }, `worker stream ended: ${message}`);
    const stream = session.stream;
    this.#closeSession(session);
    stream.emit("error", { code: grpc.status.UNAVAILABLE, details: `stream_aborted: ${message}` });
  }
}

/** Decodes one worker message into frames, or throws the refusal that ends the stream. */
function decodeBatch(message: unknown): WorkerFrame[] {
  if (message instanceof UndecodableBatch) throw invalidFrame(message.reason);
  const decoded = decode(workerBatchDecoder, message);
  if (decoded.ok) return decoded.value.frames;
  const error = decoded.error;
  throw new RpcRefusal(
    error.code === INVALID_HELLO ? INVALID_HELLO : "invalid_frame",
    error.message,
    grpc.status.INVALID_ARGUMENT,
  );
}

function invalidFrame(reason: string): RpcRefusal {
  return new RpcRefusal("invalid_frame", reason, grpc.status.INVALID_ARGUMENT);
}

function asRefusal(error: unknown): RpcRefusal {
  if (error instanceof RpcRefusal) return error;
  return new RpcRefusal(
    error instanceof SkeinError ? error.code : "internal",
    error instanceof Error ? error.message : String(error),
    error instanceof SkeinError ? grpc.status.INVALID_ARGUMENT : grpc.status.INTERNAL,
  );
}

/** Takes a waiting offer out of its queue's backlog; false when it is not there. */
function withdraw(queue: Queue, offer: TaskOffer): boolean {
  const backlog = queue.backlog.get(offer.action);
  if (backlog?.remove((t) => t === offer) === undefined) return false;
  queue.waiting--;
  if (backlog.size === 0) queue.backlog.delete(offer.action);
  return true;
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
