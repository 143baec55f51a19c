/**
 * Tasks for workers connected to another node. A node's matcher reaches only the workers
 * connected to it; in a cluster the shard that owns a run may be served by a node with no
 * worker for the run's task queue. The owner then relays the offer: it asks the other live
 * nodes, in turn, to take the attempt (`POST /cluster/relay/offer`); a node with a session on
 * that queue offers it to its own matcher and remembers whose attempt it is. What that node's
 * worker reports (result, failure, heartbeat, detach, re-attach, assignment) is sent back to
 * the owner (`POST /cluster/relay/event`), whose engine records it exactly as a local result
 * (a result is acknowledged to the worker once the owner has answered, so after its commit).
 * A release or cancel from the owner follows the attempt (`POST /cluster/relay/release`).
 * Timeouts and retries stay with the owner's engine. When no node takes the offer it waits in
 * the owner's own matcher, as on a single node.
 *
 * Node-to-node calls carry the node's own credential (auth/node-credential.ts); the relay
 * routes accept nothing else (403), whatever grants another bearer holds.
 */

import type { FastifyInstance } from "fastify";
import { array, boolean, object, oneOf, optional, string, u32 } from "../../common/decode/index.ts";
import type { Logger } from "../../common/log.ts";
import { type AttemptRef, attemptKey } from "../../protocol/attempt.ts";
import type {
  Dispatcher,
  MatcherEvents,
  OfferOutcome,
  ResultContext,
  TaskOffer,
} from "../engine/dispatcher.ts";
import { answerOf } from "../engine/dispatcher.ts";
import type { ShardOwner } from "./lease-manager.ts";

/** Attempts relayed at once, each way; past it an offer waits in the owner's matcher. */
export const MAX_RELAYED = 100_000;
/** The longest one relay call may take. */
export const RELAY_TIMEOUT_MS = 10_000;
/** How often offers waiting here (no worker anywhere yet) are offered to the other nodes again. */
export const RELAY_RETRY_MS = 500;
/** Waiting offers tried again per retry. */
export const RELAY_RETRY_BATCH = 64;

export interface RelayRoles {
  readonly nodeId: () => string | undefined;
  readonly peers: () => readonly ShardOwner[];
  /** This node's credential for node-to-node calls. */
  readonly token: () => Promise<string>;
  /** This node's dispatcher (its matcher, with the agent transport beside it). */
  readonly local: Dispatcher;
  /**
   * Takes back an attempt still waiting in this node's matcher (true), or leaves it where it
   * is when a worker here already holds it (false).
   */
  readonly withdraw: (ref: AttemptRef) => boolean;
  /** Whether a worker session here serves (namespace, task queue). */
  readonly serves: (namespace: string, taskQueue: string) => boolean;
  /** This node's engine events (the owner side records relayed results through them). */
  readonly events: () => MatcherEvents;
  readonly logger: Logger;
}

const ref = object({ run_id: string({ minBytes: 1 }), activity_id: u32(), attempt: u32() });
const offerBody = object({
  owner: string({ minBytes: 1 }),
  task: object({
    ref,
    namespace: string({ minBytes: 1 }),
    taskQueue: string({ minBytes: 1 }),
    workflowId: string({ minBytes: 1 }),
    action: string({ minBytes: 1 }),
    inputJson: string(),
    startToCloseMs: u32(),
    heartbeatMs: u32(),
  }),
});
const releaseBody = object({ ref, reason: string() });
const context = object({
  namespace: string(),
  taskQueue: string(),
  workerName: string(),
  sessionId: string(),
});
const eventBody = object({
  type: oneOf(["completed", "failed", "heartbeat", "detached", "attached", "assigned"]),
  refs: array(ref, { max: 10_000 }),
  output: optional(string()),
  failure: optional(object({ code: string(), message: string(), nonRetryable: boolean() })),
  details: optional(string()),
  ctx: context,
});
type RelayEvent = ReturnType<typeof eventBody.run>;

export class TaskRelay {
  readonly #r: RelayRoles;
  /** Owner side: attempts relayed, and the node that took each. */
  readonly #sentTo = new Map<string, { peer: ShardOwner; task: TaskOffer }>();
  /** Worker side: attempts taken for another node, that node's id and the run's workflow. */
  readonly #takenFor = new Map<string, { owner: string; workflowId: string }>();
  /** Owner side: offers no node took, waiting in this node's matcher, tried again later. */
  readonly #parked = new Map<string, TaskOffer>();
  #retry: NodeJS.Timeout | undefined;

  constructor(roles: RelayRoles) {
    this.#r = roles;
  }

  /** The owner's dispatcher: local when a worker here serves the queue, else relayed. */
  dispatcher(): Dispatcher {
    const local = this.#r.local;
    return {
      offer: (task) => {
        if (
          this.#r.serves(task.namespace, task.taskQueue) ||
          this.#r.peers().length === 0 ||
          this.#sentTo.size >= MAX_RELAYED
        ) {
          return local.offer(task);
        }
        void this.#relay(task);
        return "queued";
      },
      release: (r, reason) => {
        this.#parked.delete(attemptKey(r));
        local.release(r, reason);
        const sent = this.#sentTo.get(attemptKey(r));
        if (sent === undefined) return;
        this.#sentTo.delete(attemptKey(r));
        void this.#call(sent.peer.httpUrl, "/cluster/relay/release", { ref: r, reason });
      },
      // One sent to another node may be running there already: it is never taken back.
      withdraw: (r) => {
        if (this.#sentTo.has(attemptKey(r)) || local.withdraw?.(r) !== true) return false;
        this.#parked.delete(attemptKey(r));
        return true;
      },
      ...(local.flush === undefined ? {} : { flush: () => local.flush?.() }),
      ...(local.liveAttempts === undefined
        ? {}
        : { liveAttempts: (runId: string) => local.liveAttempts?.(runId) ?? [] }),
    };
  }

  async #relay(task: TaskOffer): Promise<void> {
    const key = attemptKey(task.ref);
    for (const peer of this.#r.peers()) {
      const answer = await this.#call(peer.httpUrl, "/cluster/relay/offer", {
        owner: this.#r.nodeId(),
        task,
      });
      const placed = (answer as { placed?: OfferOutcome | null } | undefined)?.placed;
      if (placed === "dispatched" || placed === "queued") {
        this.#sentTo.set(key, { peer, task });
        this.#schedule();
        // A worker there holds it now: its timeouts start (a queued one's start when assigned).
        if (placed === "dispatched") this.#r.events().assigned?.(task.ref);
        return;
      }
    }
    // No node has a worker for the queue: it waits here, as on a single node, and is
    // offered to the other nodes again until one of them (or this one) has a worker.
    if (this.#r.local.offer(task) === "dispatched") {
      this.#r.events().assigned?.(task.ref);
      return;
    }
    this.#parked.set(key, task);
    this.#schedule();
  }

  /** The retry and sweep timer runs while offers wait here or attempts are elsewhere. */
  #schedule(): void {
    if (this.#retry !== undefined) return;
    if (this.#parked.size === 0 && this.#sentTo.size === 0) return;
    this.#retry = setTimeout(() => void this.#retryParked(), RELAY_RETRY_MS);
    this.#retry.unref();
  }

  /**
   * Attempts relayed to a node that has left the cluster (killed, or stopped) are detached,
   * as a worker's lost stream is on one node: if nobody re-attaches them within the
   * engine's grace they are retried.
   */
  #sweep(): void {
    const live = new Set(this.#r.peers().map((p) => p.nodeId));
    const lost = new Map<string, { task: TaskOffer; refs: AttemptRef[] }>();
    for (const [key, sent] of this.#sentTo) {
      if (live.has(sent.peer.nodeId)) continue;
      this.#sentTo.delete(key);
      const queue = `${sent.task.namespace}\u0000${sent.task.taskQueue}`;
      const group = lost.get(queue) ?? { task: sent.task, refs: [] };
      group.refs.push(sent.task.ref);
      lost.set(queue, group);
    }
    for (const { task, refs } of lost.values()) {
      this.#r.events().detached?.(refs, {
        namespace: task.namespace,
        taskQueue: task.taskQueue,
        workerName: "",
        sessionId: "",
      });
    }
  }

  async #retryParked(): Promise<void> {
    this.#sweep();
    const batch = [...this.#parked.values()].slice(0, RELAY_RETRY_BATCH);
    for (const task of batch) {
      const key = attemptKey(task.ref);
      if (!this.#parked.has(key)) continue;
      // A worker here serves the queue now: this node's matcher hands the offer to it. And
      // an offer is sent elsewhere only once it is withdrawn from here (checked and taken in
      // one turn), so no attempt runs on two nodes.
      if (this.#r.serves(task.namespace, task.taskQueue) || !this.#r.withdraw(task.ref)) {
        this.#parked.delete(key);
        continue;
      }
      let taken = false;
      for (const peer of this.#r.peers()) {
        const answer = await this.#call(peer.httpUrl, "/cluster/relay/offer", {
          owner: this.#r.nodeId(),
          task,
        });
        const placed = (answer as { placed?: OfferOutcome | null } | undefined)?.placed;
        if (placed !== "dispatched" && placed !== "queued") continue;
        this.#parked.delete(key);
        this.#sentTo.set(key, { peer, task });
        if (placed === "dispatched") this.#r.events().assigned?.(task.ref);
        taken = true;
        break;
      }
      // Still no worker anywhere (or the engine gave it up meanwhile): back in line here.
      if (!taken && this.#parked.has(key) && this.#r.local.offer(task) === "dispatched") {
        this.#parked.delete(key);
        this.#r.events().assigned?.(task.ref);
      }
    }
    this.#retry = undefined;
    this.#schedule();
  }

  /**
   * Worker side: the workflow of an attempt taken here for another node. This node's engine
   * does not run that run, so the agent transport learns from here that a worker announcing
   * the attempt names its true workflow (agents/hub.ts), and so takes its announcement, and
   * every node can list, read and steer it.
   */
  workflowOfTaken(ref: AttemptRef): string | undefined {
    return this.#takenFor.get(attemptKey(ref))?.workflowId;
  }

  /** Worker side: what this node's workers report about attempts taken for another node. */
  foreign(): MatcherEvents {
    // A result is acknowledged to its worker only once the owner has recorded it; when the
    // owner cannot be reached the promise rejects, so the worker sends the result again.
    const send = async (
      type: RelayEvent["type"],
      refs: readonly AttemptRef[],
      ctx: ResultContext,
      extra = {},
    ): Promise<void> => {
      const byOwner = new Map<string, AttemptRef[]>();
      for (const r of refs) {
        const owner = this.#takenFor.get(attemptKey(r))?.owner;
        if (owner !== undefined) byOwner.set(owner, [...(byOwner.get(owner) ?? []), r]);
      }
      const settles = type === "completed" || type === "failed";
      for (const [owner, group] of byOwner) {
        const peer = this.#r.peers().find((p) => p.nodeId === owner);
        const answer =
          peer === undefined
            ? undefined
            : await this.#call(peer.httpUrl, "/cluster/relay/event", {
                type,
                refs: group,
                ctx,
                ...extra,
              });
        if (answer === undefined && settles) {
          throw new Error(`the owner of ${attemptKey(group[0]!)} (${owner}) cannot be reached`);
        }
        if (settles) for (const r of group) this.#takenFor.delete(attemptKey(r));
      }
    };
    return {
      completed: (r, output, ctx, receipt) =>
        void send("completed", [r], ctx, { output }).then(
          () => receipt.recorded(),
          (error: unknown) => receipt.refused(error),
        ),
      failed: (r, failure, ctx, receipt) =>
        void send("failed", [r], ctx, { failure }).then(
          () => receipt.recorded(),
          (error: unknown) => receipt.refused(error),
        ),
      heartbeat: (r, details, ctx) => void send("heartbeat", [r], ctx, { details }),
      detached: (refs, ctx) => void send("detached", refs, ctx),
      attached: (refs, ctx) => void send("attached", refs, ctx),
      assigned: (r) =>
        void send("assigned", [r], { namespace: "", taskQueue: "", workerName: "", sessionId: "" }),
    };
  }

  /** The relay routes (node to node). */
  routes(app: FastifyInstance): void {
    // The auth hook admits only a node credential to these (`nodeToNode`).
    const config = { nodeToNode: true };
    app.post("/cluster/relay/offer", { config }, async (request) => {
      const { owner, task } = offerBody.run(request.body, undefined);
      if (!this.#r.serves(task.namespace, task.taskQueue) || this.#takenFor.size >= MAX_RELAYED) {
        return { placed: null };
      }
      this.#takenFor.set(attemptKey(task.ref), { owner, workflowId: task.workflowId });
      let placed: OfferOutcome;
      try {
        placed = this.#r.local.offer(task);
      } catch (error) {
        this.#takenFor.delete(attemptKey(task.ref));
        if ((error as { code?: string }).code !== "attempt_already_dispatched") throw error;
        placed = "dispatched";
      }
      return { placed };
    });
    app.post("/cluster/relay/release", { config }, async (request) => {
      const body = releaseBody.run(request.body, undefined);
      this.#takenFor.delete(attemptKey(body.ref));
      this.#r.local.release(body.ref, body.reason);
      return { released: true };
    });
    app.post("/cluster/relay/event", { config }, async (request) => {
      const e = eventBody.run(request.body, undefined);
      const events = this.#r.events();
      const [first] = e.refs;
      if (e.type === "completed" && first !== undefined && e.output !== undefined) {
        this.#sentTo.delete(attemptKey(first));
        const output = e.output;
        await answerOf((receipt) => events.completed(first, output, e.ctx, receipt));
      } else if (e.type === "failed" && first !== undefined && e.failure !== undefined) {
        this.#sentTo.delete(attemptKey(first));
        const failure = e.failure;
        await answerOf((receipt) => events.failed(first, failure, e.ctx, receipt));
      } else if (e.type === "heartbeat" && first !== undefined) {
        events.heartbeat?.(first, e.details ?? "null", e.ctx);
      } else if (e.type === "detached") events.detached?.(e.refs, e.ctx);
      else if (e.type === "attached") events.attached?.(e.refs, e.ctx);
      else if (e.type === "assigned" && first !== undefined) events.assigned?.(first);
      return { recorded: true };
    });
  }

  async #call(baseUrl: string, path: string, body: unknown): Promise<unknown> {
    try {
      const response = await fetch(`${baseUrl}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${await this.#r.token()}`,
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(RELAY_TIMEOUT_MS),
      });
      const text = await response.text();
      if (response.status !== 200) {
        this.#r.logger.warn({ path, status: response.status }, "cluster relay call refused");
        return undefined;
      }
      return JSON.parse(text) as unknown;
    } catch (error) {
      this.#r.logger.warn({ err: error, path }, "cluster relay call failed");
      return undefined;
    }
  }
}
