/**
 * The agent worker's end of the agent transport: one WebSocket to the server's
 * `/agents/connect` with the worker's bearer, at the address the server announces in each
 * gRPC welcome (`connect`; a server without the transport announces none: `disconnect`).
 * Each live attempt registers here; the link announces it (identity, the gRPC session that
 * holds it, capabilities), forwards its transcript entries, and hands it the controls the
 * server sends: a control the attempt can take is held and answered `ready`, and applied
 * only on the server's `commit` (dropped on `withdraw` or when the socket closes), so a
 * control the server answered StaleTarget is never applied (messages.ts). Every message
 * from the server is decoded first; a bad one closes the socket (the link redials). A lost
 * connection is redialled with backoff and every live attempt is announced again, as it is
 * after each new gRPC session; entries written while disconnected are kept and sent on
 * reconnect.
 */

import WebSocket from "ws";
import { type BackoffPolicy, jitteredDelay } from "../common/backoff.ts";
import type { Logger } from "../common/log.ts";
import type { Capability, Outcome } from "../protocol/agent-transport/interventions.ts";
import {
  type Control,
  encodeMessage,
  MAX_MESSAGE_BYTES,
  readMessage,
  type ServerMessage,
  serverMessage,
  type TranscriptEntry,
  type WorkerMessage,
  workerMessage,
} from "../protocol/agent-transport/messages.ts";
import { type AttemptRef, attemptKey } from "../protocol/attempt.ts";

/** Transcript entries kept while disconnected; beyond this the oldest are dropped. */
export const BACKLOG_MAX = 10_000;

/** How long `connect` waits for the transport before work goes on without it. */
export const READY_WAIT_MS = 2_000;

/** Redials of a lost agent-transport connection: 100 ms doubling to 5 s, jittered. */
export const AGENT_REDIAL: BackoffPolicy = { initialMs: 100, maxMs: 5_000 };

/**
 * Controls held `ready` at once, awaiting the server's commit or withdraw. The server asks
 * one per intervention in flight; past this the link answers StaleTarget.
 */
export const MAX_HELD_CONTROLS = 1_024;

/** A control the attempt can take, held until the server commits or withdraws it. */
export interface Prepared {
  /** Applies it (a no-op if the attempt has ended meanwhile). */
  apply(): void;
  /** Gives back what `prepare` reserved (a pending approval). */
  release(): void;
}

export interface LiveRegistration {
  readonly ref: AttemptRef;
  readonly namespace: string;
  readonly workflowId: string;
  readonly capabilities: readonly Capability[];
  /** Checks the control against the attempt now: why it cannot be applied, or how to. */
  readonly prepare: (control: Control) => Exclude<Outcome, "Applied"> | Prepared;
}

interface Held {
  readonly key: string;
  readonly prepared: Prepared;
}

export class AgentLink {
  readonly #token: string | undefined;
  readonly #log: Logger | undefined;
  readonly #live = new Map<string, LiveRegistration>();
  readonly #backlog: WorkerMessage[] = [];
  /** Controls answered `ready`, by id. */
  readonly #held = new Map<string, Held>();
  /** Where the transport is (a `ws://…/agents/connect` URL), or undefined: not connected. */
  #url: string | undefined;
  /** The gRPC session of the latest welcome: it holds this process's attempts. */
  #session = "";
  #ws: WebSocket | undefined;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;
  /** Callers of `connect` waiting for the socket to open. */
  #opened: (() => void)[] = [];

  constructor(token: string | undefined, logger?: Logger) {
    this.#token = token;
    this.#log = logger;
  }

  /** The address of the transport in use, if any (for tests and logs). */
  get url(): string | undefined {
    return this.#url;
  }

  /**
   * Connects to the transport at `host` (a name, an IPv4 address or a bracketed IPv6 one)
   * and `port`, as the server announced it in the welcome of gRPC session `session`, unless
   * already there; a link to another address is dropped first. A new session on the same
   * link announces every live attempt again (their holder changed). Resolves once the link
   * is open, or after `READY_WAIT_MS` (it keeps redialling): the worker starts its tasks
   * after that, so an attempt is announced with its interventions from its first moment.
   */
  connect(host: string, port: number, session: string, waitMs = READY_WAIT_MS): Promise<void> {
    const url = `ws://${host}:${port}/agents/connect`;
    if (this.#closed) return Promise.resolve();
    const moved = session !== this.#session;
    this.#session = session;
    if (url !== this.#url) {
      this.disconnect();
      this.#url = url;
      this.#dial(url, 0);
    } else if (moved) {
      for (const r of this.#live.values()) this.#send(this.#announce(r));
    }
    if (this.#ws?.readyState === WebSocket.OPEN) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        const i = this.#opened.indexOf(done);
        if (i >= 0) this.#opened.splice(i, 1);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      this.#opened.push(done);
    });
  }

  /** Drops the connection and stops redialling; live attempts stay registered. */
  disconnect(): void {
    this.#url = undefined;
    clearTimeout(this.#retry);
    const ws = this.#ws;
    this.#ws = undefined;
    ws?.close();
    this.#releaseHeld();
  }

  #dial(url: string, failures: number): void {
    if (this.#closed || url !== this.#url) return;
    const ws = new WebSocket(url, {
      headers: this.#token === undefined ? {} : { authorization: `Bearer ${this.#token}` },
      maxPayload: MAX_MESSAGE_BYTES,
    });
    // Held while connecting too, so a disconnect aborts the handshake.
    this.#ws = ws;
    ws.on("open", () => {
      failures = 0;
      for (const r of this.#live.values()) this.#send(this.#announce(r));
      for (const m of this.#backlog.splice(0)) this.#send(m);
      for (const done of this.#opened.splice(0)) done();
    });
    ws.on("message", (data, isBinary) => {
      const read = readMessage(serverMessage, data, isBinary);
      if (!read.ok) {
        this.#log?.warn({ reason: read.refusal.reason }, "agent transport: message refused");
        ws.close(read.refusal.code, read.refusal.reason);
        return;
      }
      this.#receive(read.value);
    });
    ws.on("error", (error) => this.#log?.debug({ err: error }, "agent transport error"));
    ws.on("close", (code, reason) => {
      if (code === 1008) {
        this.#log?.warn({ code, reason: reason.toString() }, "agent transport: server refused");
      }
      if (this.#ws !== ws) return;
      this.#ws = undefined;
      // Nothing held on this socket can be committed any more.
      this.#releaseHeld();
      if (this.#closed || url !== this.#url) return;
      const wait = jitteredDelay(AGENT_REDIAL, failures + 1);
      this.#retry = setTimeout(() => this.#dial(url, failures + 1), wait);
    });
  }

  #receive(message: ServerMessage): void {
    switch (message.type) {
      case "control":
        this.#prepare(message.id, message.ref, message.control);
        return;
      case "commit": {
        const held = this.#held.get(message.id);
        this.#held.delete(message.id);
        held?.prepared.apply();
        return;
      }
      case "withdraw": {
        const held = this.#held.get(message.id);
        this.#held.delete(message.id);
        held?.prepared.release();
        return;
      }
      case "apply": {
        const prepared = this.#live.get(attemptKey(message.ref))?.prepare(message.control);
        if (typeof prepared === "object") prepared.apply();
        return;
      }
    }
  }

  #prepare(id: string, ref: AttemptRef, control: Control): void {
    const key = attemptKey(ref);
    const live = this.#live.get(key);
    const prepared =
      live === undefined || this.#held.size >= MAX_HELD_CONTROLS
        ? "StaleTarget"
        : live.prepare(control);
    if (typeof prepared === "string") {
      this.#send({ type: "outcome", id, outcome: prepared });
      return;
    }
    this.#held.set(id, { key, prepared });
    this.#send({ type: "ready", id });
  }

  #releaseHeld(): void {
    const held = [...this.#held.values()];
    this.#held.clear();
    for (const h of held) h.prepared.release();
  }

  #send(message: WorkerMessage): void {
    const ws = this.#ws;
    if (ws === undefined || ws.readyState !== WebSocket.OPEN) {
      if (message.type === "transcript") {
        this.#backlog.push(message);
        if (this.#backlog.length > BACKLOG_MAX) {
          this.#backlog.shift();
          this.#log?.warn("agent transport down: dropped the oldest unsent transcript entry");
        }
      }
      return;
    }
    ws.send(encodeMessage(message));
  }

  #announce(r: LiveRegistration): WorkerMessage {
    return {
      type: "live",
      ref: r.ref,
      namespace: r.namespace,
      workflow_id: r.workflowId,
      session_id: this.#session,
      capabilities: [...r.capabilities],
    };
  }

  register(registration: LiveRegistration): void {
    this.#live.set(attemptKey(registration.ref), registration);
    this.#send(this.#announce(registration));
  }

  /**
   * Sends an entry, or drops it with a warning when the server would refuse it (model output
   * nested beyond the bound, say): one odd entry must not cost the attempt its transport.
   */
  record(ref: AttemptRef, entry: TranscriptEntry): void {
    const message: WorkerMessage = { type: "transcript", ref, entry };
    const bytes = Buffer.from(encodeMessage(message));
    const check = readMessage(workerMessage, bytes, false);
    if (!check.ok || bytes.length > MAX_MESSAGE_BYTES) {
      this.#log?.warn(
        { reason: check.ok ? "too large" : check.refusal.reason },
        "agent transport: transcript entry not sendable; dropped",
      );
      return;
    }
    this.#send(message);
  }

  end(ref: AttemptRef): void {
    const key = attemptKey(ref);
    this.#live.delete(key);
    for (const [id, held] of this.#held) if (held.key === key) this.#held.delete(id);
    this.#send({ type: "ended", ref });
  }

  close(): void {
    this.#closed = true;
    this.disconnect();
    for (const done of this.#opened.splice(0)) done();
  }
}
