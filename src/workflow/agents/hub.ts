/**
 * The server side of the agent transport. Agent workers hold one WebSocket each (path
 * `/agents/connect` on the HTTP listener, bearer with the `worker` grant) over which they
 * announce each live attempt with its advertised capabilities, append transcript entries, and
 * answer controls (the protocol is in messages.ts). The hub knows which connection owns which
 * live attempt; an intervention becomes a control sent to that owner, and its outcome is the
 * owner's answer: `StaleTarget` when no connection owns the attempt (finished, gRPC-only
 * worker, killed worker, transport off), the connection drops, or no answer comes in time.
 * Transcript entries are stored durably (the store's `agent_transcripts`, migration 5) in
 * arrival order.
 *
 * Nothing a socket sends is trusted: each message is decoded first (a bad one closes that
 * socket only); an attempt is owned only when the gRPC matcher says the session the worker
 * names holds it, in a namespace the socket's bearer is granted, for the run's own workflow;
 * transcript entries are taken only for attempts the socket owns; a control's answer only
 * from the socket it was sent to. Every socket is bounded (owned attempts), pinged, and
 * closed when its bearer expires; the number of sockets is capped.
 */

import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, type WebSocket, WebSocketServer } from "ws";
import type { SkeinError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import type { Capability, Outcome } from "../../protocol/agent-transport/interventions.ts";
import {
  CLOSE_POLICY,
  type Control,
  closeReason,
  encodeJson,
  MAX_MESSAGE_BYTES,
  type Refusal,
  readMessage,
  type WorkerMessage,
  workerMessage,
} from "../../protocol/agent-transport/messages.ts";
import { type AttemptRef, attemptKey } from "../../protocol/attempt.ts";
import { bearerToken } from "../auth/bearer.ts";
import { canAccessNamespace, type Principal, type TokenVerifier } from "../auth/tokens.ts";
import { workflowError } from "../errors.ts";
import { rawRefusal } from "../http/errors.ts";
import type { TranscribedAttempt, TranscriptStore } from "../persistence/store.ts";
import { AGENT_PATH, type AgentLimits, LIMITS, MAX_TIMER_MS } from "./limits.ts";
import { ask, type Link, ready, send } from "./link.ts";

export {
  AGENT_PATH,
  type AgentLimits,
  CONTROL_ANSWER_MS,
  MAX_AGENT_SOCKETS,
  MAX_LIVE_PER_SOCKET,
  PING_INTERVAL_MS,
} from "./limits.ts";

/** Who holds attempts, as the server itself knows it (the matcher and the engine). */
export interface AttemptAuthority {
  /** The namespace of live gRPC session `sessionId` if it holds the attempt now. */
  heldBy(ref: AttemptRef, sessionId: string): string | undefined;
  /**
   * The workflow id of the attempt's run: one this node's engine runs, or (cluster) one whose
   * attempt the task relay took here for the engine of another node.
   */
  workflowOf(ref: AttemptRef): string | undefined;
}

export interface LiveAgentAttempt {
  readonly ref: AttemptRef;
  readonly namespace: string;
  readonly workflowId: string;
  readonly capabilities: readonly Capability[];
}

interface Owned extends LiveAgentAttempt {
  readonly link: Link;
}

export class AgentHub {
  readonly enabled: boolean;
  readonly #verify: TokenVerifier;
  readonly #log: Logger;
  readonly #limits: AgentLimits;
  readonly #live = new Map<string, Owned>();
  readonly #links = new Set<Link>();
  readonly #transcripts: TranscriptStore;
  /** Appends in arrival order: each waits for the one before (a pool may reorder otherwise). */
  #writes: Promise<void> = Promise.resolve();
  readonly #wss: WebSocketServer;
  #upgrading = 0;
  #authority: AttemptAuthority | undefined;
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(options: {
    enabled: boolean;
    verify: TokenVerifier;
    logger: Logger;
    transcripts: TranscriptStore;
    limits?: Partial<AgentLimits>;
  }) {
    this.enabled = options.enabled;
    this.#transcripts = options.transcripts;
    this.#verify = options.verify;
    this.#log = options.logger;
    this.#limits = { ...LIMITS, ...options.limits };
    this.#wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
    // A handshake ws refuses (bad key, version, method) gets the error body too.
    this.#wss.on("wsClientError", (error, socket) => {
      const refusal = workflowError("bad_request", `WebSocket handshake: ${error.message}`);
      socket.end(rawRefusal(refusal), () => socket.destroy());
    });
  }

  /** Who holds attempts; until it is known every announcement is ignored. */
  authorize(authority: AttemptAuthority): void {
    this.#authority = authority;
  }

  /** Takes WebSocket upgrades on `AGENT_PATH`; others are refused. Nothing when disabled. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    // Destroyed once written: an upgrade socket is outside the listener's timeouts, so a
    // half-closed one would otherwise stay until the client closes it.
    const refuse = (refusal: SkeinError) => socket.end(rawRefusal(refusal), () => socket.destroy());
    if (!this.enabled || request.url !== AGENT_PATH) {
      refuse(workflowError("route_not_found", "no WebSocket endpoint at this path"));
      return;
    }
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) {
      refuse(workflowError("unauthenticated", "authorization must be Bearer <token>"));
      return;
    }
    if (this.#links.size + this.#upgrading >= this.#limits.maxSockets) {
      this.#log.warn({ max: this.#limits.maxSockets }, "agent transport full; upgrade refused");
      refuse(workflowError("agent_transport_full", "too many agent transport connections"));
      return;
    }
    this.#upgrading++;
    this.#verify(token).then(
      (principal) => {
        this.#upgrading--;
        if (!principal.worker) {
          refuse(workflowError("forbidden", "the bearer lacks the worker grant"));
          return;
        }
        this.#wss.handleUpgrade(request, socket, head, (ws) => this.#serve(ws, principal));
      },
      () => {
        this.#upgrading--;
        refuse(workflowError("unauthenticated", "the bearer is not a valid token"));
      },
    );
  }

  #serve(ws: WebSocket, principal: Principal): void {
    const link: Link = {
      ws,
      principal,
      owned: new Set(),
      pending: new Map(),
      alive: true,
      closing: false,
      expiry: undefined,
    };
    this.#links.add(link);
    this.#startHeartbeat();
    this.#watchExpiry(link);
    ws.on("pong", () => {
      link.alive = true;
    });
    ws.on("message", (data, isBinary) => this.#receive(link, data, isBinary));
    ws.on("close", () => this.#drop(link));
    ws.on("error", (error) => this.#log.warn({ err: error }, "agent transport error"));
  }

  #receive(link: Link, data: RawData, isBinary: boolean): void {
    if (link.closing) return;
    link.alive = true;
    const read = readMessage(workerMessage, data, isBinary);
    if (!read.ok) {
      this.#close(link, read.refusal);
      return;
    }
    const message = read.value;
    switch (message.type) {
      case "live":
        this.#announce(link, message);
        return;
      case "ended": {
        const key = attemptKey(message.ref);
        if (link.owned.delete(key) && this.#live.get(key)?.link === link) this.#live.delete(key);
        return;
      }
      case "transcript":
        if (link.owned.has(attemptKey(message.ref))) this.#append(message.ref, message.entry);
        return;
      case "ready":
        ready(link, message.id);
        return;
      case "outcome":
        link.pending.get(message.id)?.(message.outcome);
        return;
    }
  }

  /** Takes ownership of an attempt the worker behind this socket holds, or ignores it. */
  #announce(link: Link, live: Extract<WorkerMessage, { type: "live" }>): void {
    if (!canAccessNamespace(link.principal, live.namespace)) {
      this.#close(link, {
        code: CLOSE_POLICY,
        reason: closeReason(`namespace_not_granted: ${JSON.stringify(live.namespace)}`),
      });
      return;
    }
    const key = attemptKey(live.ref);
    if (!this.#holds(live)) {
      // Not (or no longer) held by that session: a race with the attempt's end or a gRPC
      // reconnect (the worker announces again after its next welcome), or a guess.
      this.#log.debug({ attempt: key }, "agent transport: live attempt not held; ignored");
      return;
    }
    if (!link.owned.has(key) && link.owned.size >= this.#limits.maxLivePerSocket) {
      this.#close(link, {
        code: CLOSE_POLICY,
        reason: `too_many_live_attempts: at most ${this.#limits.maxLivePerSocket} per socket`,
      });
      return;
    }
    // The same worker on a new socket (it reconnected) takes its attempt over.
    const prior = this.#live.get(key);
    if (prior !== undefined && prior.link !== link) prior.link.owned.delete(key);
    link.owned.add(key);
    this.#live.set(key, {
      ref: live.ref,
      namespace: live.namespace,
      workflowId: live.workflow_id,
      capabilities: live.capabilities,
      link,
    });
  }

  /** The named session holds the attempt, in the named namespace, for the named workflow. */
  #holds(live: Extract<WorkerMessage, { type: "live" }>): boolean {
    const authority = this.#authority;
    return (
      authority !== undefined &&
      authority.heldBy(live.ref, live.session_id) === live.namespace &&
      authority.workflowOf(live.ref) === live.workflow_id
    );
  }

  #close(link: Link, refusal: Refusal): void {
    if (link.closing) return;
    link.closing = true;
    this.#log.info(
      { subject: link.principal.subject, code: refusal.code, reason: refusal.reason },
      "agent transport: socket refused",
    );
    link.ws.close(refusal.code, refusal.reason);
  }

  /** Everything the socket registered goes with it; its unanswered controls are stale. */
  #drop(link: Link): void {
    if (!this.#links.delete(link)) return;
    clearTimeout(link.expiry);
    for (const key of link.owned) if (this.#live.get(key)?.link === link) this.#live.delete(key);
    link.owned.clear();
    for (const settle of [...link.pending.values()]) settle("StaleTarget");
    if (this.#links.size === 0) {
      clearInterval(this.#heartbeat);
      this.#heartbeat = undefined;
    }
  }

  /** Closes the socket when its bearer expires (verification refuses it from then on). */
  #watchExpiry(link: Link): void {
    const left = link.principal.expiresAt * 1000 - Date.now();
    if (left <= 0) {
      this.#close(link, { code: CLOSE_POLICY, reason: "token_expired" });
      return;
    }
    link.expiry = setTimeout(() => this.#watchExpiry(link), Math.min(left, MAX_TIMER_MS));
    link.expiry.unref();
  }

  #startHeartbeat(): void {
    if (this.#heartbeat !== undefined) return;
    this.#heartbeat = setInterval(() => {
      for (const link of this.#links) {
        if (!link.alive) {
          this.#log.info({ subject: link.principal.subject }, "agent transport: no pong; closed");
          link.ws.terminate();
          continue;
        }
        link.alive = false;
        link.ws.ping();
      }
    }, this.#limits.pingIntervalMs);
    this.#heartbeat.unref();
  }

  #append(ref: AttemptRef, entry: unknown): void {
    const at = Date.now();
    this.#writes = this.#writes
      .then(() => this.#transcripts.append(ref, encodeJson(entry), at))
      .catch((error: unknown) =>
        this.#log.error({ err: error }, "cannot store an agent transcript entry"),
      );
  }

  /** Live agent attempts of a workflow in a namespace. */
  attempts(namespace: string, workflowId: string): LiveAgentAttempt[] {
    return [...this.#live.values()]
      .filter((a) => a.namespace === namespace && a.workflowId === workflowId)
      .map(({ ref, namespace: ns, workflowId: wf, capabilities }) => ({
        ref,
        namespace: ns,
        workflowId: wf,
        capabilities,
      }));
  }

  /** The attempt's stored transcript, including every entry received before this call. */
  async transcript(ref: AttemptRef): Promise<unknown[]> {
    await this.#writes;
    const rows = await this.#transcripts.list(ref);
    return rows.map((text) => JSON.parse(text) as unknown);
  }

  /** The run's attempts with a stored transcript, counting every entry received before this call. */
  async transcribed(runId: string): Promise<TranscribedAttempt[]> {
    await this.#writes;
    return this.#transcripts.attempts(runId);
  }

  /** Waits for the entries received so far to be stored (shutdown). */
  flushed(): Promise<void> {
    return this.#writes;
  }

  /** Sizes of what the hub holds, for tests and status. */
  stats(): { sockets: number; live: number; pending: number } {
    let pending = 0;
    for (const link of this.#links) pending += link.pending.size;
    return { sockets: this.#links.size, live: this.#live.size, pending };
  }

  /**
   * Sends a control to the attempt's owner and waits for its outcome. `Applied` is answered
   * exactly when `commit` is sent; after `StaleTarget` only `withdraw` can follow, so a caller
   * told StaleTarget can rely on the control never being applied.
   */
  async intervene(
    namespace: string,
    workflowId: string,
    ref: AttemptRef,
    control: Control,
  ): Promise<Outcome> {
    const owned = this.#live.get(attemptKey(ref));
    if (
      owned === undefined ||
      owned.namespace !== namespace ||
      owned.workflowId !== workflowId ||
      owned.link.closing ||
      owned.link.ws.readyState !== owned.link.ws.OPEN
    ) {
      return "StaleTarget";
    }
    if (!owned.capabilities.includes(control.kind.kind)) return "CapabilityNotSupported";
    return ask(owned.link, owned.ref, control);
  }

  /**
   * The engine gave the attempt up (see dispatch.ts): a Cancel control, stamped by the
   * server itself (subject `skein`), to its owner if it is a live agent attempt. Nobody
   * waits for it, so it is applied on arrival.
   */
  cancelAttempt(ref: AttemptRef, reason: string): void {
    const owned = this.#live.get(attemptKey(ref));
    if (owned === undefined) return;
    const control: Control = {
      kind: { kind: "Cancel", reason },
      subject: "skein",
      at: new Date().toISOString(),
    };
    send(owned.link, { type: "apply", ref: owned.ref, control });
  }

  close(): void {
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    for (const ws of this.#wss.clients) ws.terminate();
    this.#wss.close();
  }
}
