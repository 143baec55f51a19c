/**
 * The builtin worker's connection to the server: one gRPC stream at a time, a hello that
 * declares what this process serves, handlers run for each assigned attempt up to the
 * concurrency bound, heartbeats for attempts with a heartbeat timeout, and results kept until
 * the server acknowledges them. When the stream is lost the attempts in hand keep running; the
 * runtime reconnects with exponential backoff, lists in its new hello the attempts it still
 * holds, and resends the unacknowledged results, so nothing finished is lost and the server
 * (which remembers what it settled) never applies a result twice. After
 * `reconnect.maxAttempts` failed reconnects in a row it gives up: running attempts are
 * abandoned and `run()` rejects with WorkerGaveUp. A refusal by the server (bad bearer,
 * missing grant, namespace absent, bad hello) is final and rejects with WorkerRefused.
 * Every server message is decoded before it is read: a malformed one ends that stream like
 * a lost connection (the runtime reconnects), so a bad server cannot crash a worker.
 *
 * Connection states:  connecting --welcome--> serving --stream lost--> backing off --> connecting
 *                     connecting --failed--> backing off (or gave up after max attempts)
 *                     any --refused--> stopped;  any --stop()--> stopped
 */

import { randomUUID } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import { type BackoffPolicy, jitteredDelay } from "../common/backoff.ts";
import { SkeinError } from "../common/errors.ts";
import { type Logger, silentLogger } from "../common/log.ts";
import {
  type CodecClientStream,
  type ReceivedServerBatch,
  WorkerStreamClient,
} from "../protocol/worker-stream/codec.ts";
import {
  HELD_PER_SLOT,
  MAX_FAILURE_MESSAGE_BYTES,
  truncateUtf8,
} from "../protocol/worker-stream/decode.ts";
import {
  type AttemptRef,
  attemptKey,
  CANCEL_CAPABILITY,
  FrameBatcher,
  type ServerFrame,
  type Task,
  type WorkerFrame,
} from "../protocol/worker-stream/index.ts";
import type { WorkerDocument } from "./document.ts";
import { ActivityError } from "./handler.ts";

export interface ReconnectPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
  /** Failed reconnects in a row before giving up; 0 never gives up. */
  readonly maxAttempts: number;
}

export interface RuntimeOptions {
  readonly document: WorkerDocument;
  /** grpc-js target `host:port`. */
  readonly target: string;
  readonly namespace: string;
  readonly concurrency: number;
  readonly token: string | undefined;
  readonly reconnect: ReconnectPolicy;
  /** SKEIN_DEPLOYMENT of this process, "" when not launched by a deployment. */
  readonly deployment: string;
  readonly logger?: Logger;
  /**
   * Each welcome: the port of the server's agent transport on the dialled host (0: none)
   * and the session's id (the agent transport names it). Tasks that arrive before the
   * returned promise settles wait for it.
   */
  readonly onWelcome?: (agentPort: number, sessionId: string) => Promise<void> | void;
}

/** The server refused this worker; retrying cannot help. */
export class WorkerRefused extends SkeinError {
  constructor(code: string, message: string) {
    super(code, message);
    this.name = "WorkerRefused";
  }
}

export class WorkerGaveUp extends SkeinError {
  constructor(message: string) {
    super("worker_gave_up", message);
    this.name = "WorkerGaveUp";
  }
}

/** gRPC statuses that mean "you may not serve here", not "the server is away". */
const FINAL_STATUSES = new Set<grpc.status>([
  grpc.status.UNAUTHENTICATED,
  grpc.status.PERMISSION_DENIED,
  grpc.status.NOT_FOUND,
  grpc.status.INVALID_ARGUMENT,
  // Not a Skein worker endpoint at that address.
  grpc.status.UNIMPLEMENTED,
]);

/** The longest delay a Node timer holds (a longer one fires at once). */
const MAX_TIMER_MS = 2_147_483_647;

interface Running {
  readonly task: Task;
  readonly abort: AbortController;
  heartbeat: NodeJS.Timeout | undefined;
  deadline: NodeJS.Timeout | undefined;
}

interface SessionEnd {
  readonly welcomed: boolean;
  readonly code: grpc.status;
  readonly details: string;
}

export class WorkerRuntime {
  readonly #opts: RuntimeOptions;
  readonly #log: Logger;
  readonly #instanceId = randomUUID();
  readonly #running = new Map<string, Running>();
  /** Tasks assigned beyond the free handler slots (only after a re-attach overlap). */
  readonly #waiting: Task[] = [];
  /** Results not yet acknowledged by the server, by attempt key. */
  readonly #unacked = new Map<string, { readonly frame: WorkerFrame; readonly action: string }>();
  #out: FrameBatcher<WorkerFrame> | undefined;
  #call: CodecClientStream | undefined;
  #stopped = false;
  /** Set while `onWelcome`'s promise is pending: tasks wait in `#waiting` until it settles. */
  #gated = false;
  /** Counts welcomes, so only the latest one's promise lifts the gate. */
  #welcomes = 0;
  #wake: (() => void) | undefined;
  /** Sessions that reached welcome, for tests and logs. */
  sessions = 0;

  constructor(options: RuntimeOptions) {
    this.#opts = options;
    this.#log = options.logger ?? silentLogger();
  }

  /** Attempts currently executing. */
  get busy(): number {
    return this.#running.size;
  }

  /** Serves until stop(); rejects with WorkerRefused or WorkerGaveUp. */
  async run(): Promise<void> {
    const policy: BackoffPolicy = {
      initialMs: this.#opts.reconnect.initialMs,
      maxMs: this.#opts.reconnect.maxMs,
    };
    let failures = 0;
    while (!this.#stopped) {
      const end = await this.#session();
      if (this.#stopped) break;
      if (FINAL_STATUSES.has(end.code)) {
        this.#abandon("refused by the server");
        const [code, ...rest] = end.details.split(": ");
        throw new WorkerRefused(
          rest.length > 0 ? code! : "refused",
          end.details || grpc.status[end.code],
        );
      }
      if (end.welcomed) failures = 0;
      failures++;
      const max = this.#opts.reconnect.maxAttempts;
      if (max > 0 && failures > max) {
        this.#abandon("gave up reconnecting");
        throw new WorkerGaveUp(
          `gave up after ${max} reconnect attempt${max === 1 ? "" : "s"} to ${this.#opts.target}: ${end.details || grpc.status[end.code]}`,
        );
      }
      // Jittered: workers that lost one restarted server do not all come back at once.
      const wait = jitteredDelay(policy, failures);
      this.#log.warn(
        { endpoint: this.#opts.target, attempt: failures, wait_ms: wait, reason: end.details },
        end.welcomed ? "lost the server; reconnecting" : "cannot reach the server; retrying",
      );
      await this.#sleep(wait);
    }
  }

  /** Stops serving: running attempts are aborted, their results flushed, the stream closed. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const r of this.#running.values())
      r.abort.abort(new ActivityError("worker_stopped", "the worker is stopping"));
    this.#wake?.();
    setImmediate(() => {
      this.#out?.flush();
      this.#call?.end();
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((done) => {
      const timer = setTimeout(done, ms);
      this.#wake = () => {
        clearTimeout(timer);
        done();
      };
    });
  }

  #abandon(reason: string): void {
    for (const r of this.#running.values())
      r.abort.abort(new ActivityError("worker_stopped", reason));
  }

  #hello(): WorkerFrame {
    const doc = this.#opts.document;
    return {
      frame: "hello",
      hello: {
        name: doc.name,
        kind: doc.kind,
        namespace: this.#opts.namespace,
        task_queue: doc.taskQueue,
        concurrency: this.#opts.concurrency,
        deployment: this.#opts.deployment,
        actions: [...doc.handlers.keys()].map((action) => ({
          action,
          capabilities: [CANCEL_CAPABILITY],
        })),
        instance_id: this.#instanceId,
        // Running attempts first; the server takes at most HELD_PER_SLOT × concurrency. A
        // result left off is still resent, and the server acknowledges it.
        running: [...this.#running.values()]
          .map((r) => ({ ref: r.task.ref, action: r.task.action }))
          .concat(
            [...this.#unacked.values()].map((u) => ({ ref: refOf(u.frame), action: u.action })),
          )
          .slice(0, HELD_PER_SLOT * this.#opts.concurrency),
      },
    };
  }

  /** One connection, from dial to the stream's end. */
  #session(): Promise<SessionEnd> {
    const client = new WorkerStreamClient(this.#opts.target, grpc.credentials.createInsecure(), {
      "grpc.keepalive_time_ms": 10_000,
      "grpc.keepalive_timeout_ms": 5_000,
      "grpc.max_receive_message_length": 16 * 1024 * 1024,
    });
    const metadata = new grpc.Metadata();
    if (this.#opts.token !== undefined) metadata.set("authorization", `Bearer ${this.#opts.token}`);
    const call = (client as unknown as { Connect(m: grpc.Metadata): CodecClientStream }).Connect(
      metadata,
    );
    this.#call = call;
    let welcomed = false;
    const out = new FrameBatcher<WorkerFrame>((frames) => call.write(frames));
    return new Promise<SessionEnd>((done) => {
      let finished = false;
      const finish = (code: grpc.status, details: string) => {
        if (finished) return;
        finished = true;
        if (this.#out === out) this.#out = undefined;
        out.clear();
        client.close();
        done({ welcomed, code, details });
      };
      call.on("data", (batch: ReceivedServerBatch) => {
        if (typeof batch === "string") {
          // Not a server we can follow: end this stream and reconnect, as after a lost one.
          finish(grpc.status.INTERNAL, `invalid_frame: ${batch}`);
          call.cancel();
          return;
        }
        for (const frame of batch)
          this.#onServerFrame(frame, out, () => {
            welcomed = true;
          });
      });
      call.on("error", (error: grpc.ServiceError) =>
        finish(error.code, error.details || error.message),
      );
      call.on("status", (status: grpc.StatusObject) => finish(status.code, status.details));
      call.write([this.#hello()]);
    });
  }

  #onServerFrame(frame: ServerFrame, out: FrameBatcher<WorkerFrame>, welcomed: () => void): void {
    switch (frame.frame) {
      case "welcome":
        welcomed();
        this.sessions++;
        this.#out = out;
        this.#log.info(
          { endpoint: this.#opts.target, session: frame.welcome.session_id },
          "connected",
        );
        for (const result of this.#unacked.values()) out.push(result.frame);
        this.#welcome(frame.welcome.agent_port, frame.welcome.session_id);
        return;
      case "task":
        this.#accept(frame.task);
        return;
      case "cancel":
        this.#cancel(frame.cancel.ref, frame.cancel.reason || "cancelled by the server");
        return;
      case "ack":
        this.#unacked.delete(attemptKey(frame.ack.ref));
        return;
    }
  }

  #cancel(ref: AttemptRef, reason: string): void {
    const key = attemptKey(ref);
    const error = new ActivityError("cancelled", reason, { nonRetryable: true });
    const running = this.#running.get(key);
    if (running !== undefined) {
      running.abort.abort(error);
      return;
    }
    // Not started yet (waiting for a handler slot): it never starts.
    const i = this.#waiting.findIndex((t) => attemptKey(t.ref) === key);
    if (i < 0) return;
    const [task] = this.#waiting.splice(i, 1);
    const result: WorkerFrame = {
      frame: "failure",
      failure: { ref, code: error.code, message: error.message, non_retryable: true },
    };
    this.#unacked.set(key, { frame: result, action: task!.action });
    this.#out?.push(result);
  }

  /** Tasks wait while what the welcome starts (the agent link) gets ready. */
  #welcome(agentPort: number, sessionId: string): void {
    const ready = this.#opts.onWelcome?.(agentPort, sessionId);
    if (ready === undefined) return;
    this.#gated = true;
    const welcome = ++this.#welcomes;
    const open = () => {
      if (welcome !== this.#welcomes) return;
      this.#gated = false;
      while (!this.#stopped && this.#running.size < this.#opts.concurrency) {
        const next = this.#waiting.shift();
        if (next === undefined) break;
        this.#start(next);
      }
    };
    ready.then(open, open);
  }

  #accept(task: Task): void {
    const key = attemptKey(task.ref);
    if (this.#running.has(key)) return;
    const result = this.#unacked.get(key);
    if (result !== undefined) {
      this.#out?.push(result.frame);
      return;
    }
    if (this.#gated || this.#running.size >= this.#opts.concurrency) {
      this.#waiting.push(task);
      return;
    }
    this.#start(task);
  }

  #start(task: Task): void {
    const key = attemptKey(task.ref);
    const handler = this.#opts.document.handlers.get(task.action);
    const abort = new AbortController();
    const running: Running = { task, abort, heartbeat: undefined, deadline: undefined };
    this.#running.set(key, running);
    const beat = (details?: unknown) => {
      this.#out?.push({
        frame: "heartbeat",
        heartbeat: {
          ref: task.ref,
          details_json: details === undefined ? "" : JSON.stringify(details),
        },
      });
    };
    if (task.heartbeat_ms > 0) {
      running.heartbeat = setInterval(
        () => beat(),
        Math.min(MAX_TIMER_MS, Math.max(10, Math.floor(task.heartbeat_ms / 3))),
      );
    }
    // A deadline beyond what a Node timer can hold is left to the server's own timer.
    if (task.start_to_close_ms > 0 && task.start_to_close_ms <= MAX_TIMER_MS) {
      running.deadline = setTimeout(
        () =>
          abort.abort(
            new ActivityError(
              "start_to_close_timeout",
              `attempt exceeded start_to_close ${task.start_to_close_ms} ms`,
            ),
          ),
        task.start_to_close_ms,
      );
    }
    const work =
      handler === undefined
        ? Promise.reject(
            new ActivityError(
              "unknown_action",
              `this worker has no action ${JSON.stringify(task.action)}`,
              {
                nonRetryable: true,
              },
            ),
          )
        : handler(task.input_json, {
            signal: abort.signal,
            heartbeat: beat,
            namespace: task.namespace,
            workflowId: task.workflow_id,
            runId: task.ref.run_id,
            activityId: task.ref.activity_id,
            attempt: task.ref.attempt,
            action: task.action,
          });
    work.then(
      (output) =>
        this.#finish(key, running, {
          frame: "completion",
          completion: { ref: task.ref, output_json: output },
        }),
      (error: unknown) => {
        const e =
          error instanceof ActivityError
            ? error
            : new ActivityError(
                "handler_error",
                error instanceof Error ? error.message : String(error),
              );
        this.#finish(key, running, {
          frame: "failure",
          failure: {
            ref: task.ref,
            code: e.code,
            message: truncateUtf8(e.message, MAX_FAILURE_MESSAGE_BYTES),
            non_retryable: e.nonRetryable,
          },
        });
      },
    );
  }

  #finish(key: string, running: Running, result: WorkerFrame): void {
    if (running.heartbeat !== undefined) clearInterval(running.heartbeat);
    if (running.deadline !== undefined) clearTimeout(running.deadline);
    this.#running.delete(key);
    this.#unacked.set(key, { frame: result, action: running.task.action });
    this.#out?.push(result);
    const next = this.#gated ? undefined : this.#waiting.shift();
    if (next !== undefined && !this.#stopped) this.#start(next);
  }
}

function refOf(frame: WorkerFrame): AttemptRef {
  switch (frame.frame) {
    case "completion":
      return frame.completion.ref;
    case "failure":
      return frame.failure.ref;
    case "heartbeat":
      return frame.heartbeat.ref;
    case "hello":
      throw new SkeinError("internal", "a hello is not a result");
  }
}
