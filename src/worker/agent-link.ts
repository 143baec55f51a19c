/**
 * The agent worker's end of the agent transport: one WebSocket to the server's
 * `/agents/connect` with the worker's bearer, at the address the server announces in each
 * gRPC welcome (`connect`; a server without the transport announces none: `disconnect`).
 * Each live agent attempt registers here; the
 * link announces it (run id, activity position, attempt, capabilities), forwards its
 * transcript entries, and hands it the controls the server sends, answering with the outcome
 * the attempt reports. A lost connection is redialled with backoff and every live attempt is
 * announced again; entries written while disconnected are kept and sent on reconnect.
 */

import WebSocket from "ws";
import type { Logger } from "../common/log.ts";
import {
  type AttemptIdentity,
  type Capability,
  type Control,
  identityKey,
  type Outcome,
  type ServerMessage,
  type TranscriptEntry,
  type WorkerMessage,
} from "../workflow/agents/control.ts";

/** Transcript entries kept while disconnected; beyond this the oldest are dropped. */
export const BACKLOG_MAX = 10_000;

/** How long `connect` waits for the transport before work goes on without it. */
export const READY_WAIT_MS = 2_000;

export interface LiveRegistration {
  readonly ref: AttemptIdentity;
  readonly namespace: string;
  readonly workflowId: string;
  readonly capabilities: readonly Capability[];
  readonly onControl: (control: Control) => Outcome;
}

export class AgentLink {
  readonly #token: string | undefined;
  readonly #log: Logger | undefined;
  readonly #live = new Map<string, LiveRegistration>();
  readonly #backlog: WorkerMessage[] = [];
  /** Where the transport is (a `ws://…/agents/connect` URL), or undefined: not connected. */
  #url: string | undefined;
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
   * and `port`, as the server announced it, unless already there; a link to another address
   * is dropped first. Resolves once the link is open, or after `READY_WAIT_MS` (it keeps
   * redialling): the worker starts its tasks after that, so an attempt is announced with
   * its interventions from its first moment rather than a little later.
   */
  connect(host: string, port: number, waitMs = READY_WAIT_MS): Promise<void> {
    const url = `ws://${host}:${port}/agents/connect`;
    if (this.#closed) return Promise.resolve();
    if (url !== this.#url) {
      this.disconnect();
      this.#url = url;
      this.#dial(url, 0);
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
  }

  #dial(url: string, failures: number): void {
    if (this.#closed || url !== this.#url) return;
    const ws = new WebSocket(url, {
      headers: this.#token === undefined ? {} : { authorization: `Bearer ${this.#token}` },
    });
    // Held while connecting too, so a disconnect aborts the handshake.
    this.#ws = ws;
    ws.on("open", () => {
      failures = 0;
      for (const r of this.#live.values()) this.#send(announce(r));
      for (const m of this.#backlog.splice(0)) this.#send(m);
      for (const done of this.#opened.splice(0)) done();
    });
    ws.on("message", (data) => {
      let message: ServerMessage;
      try {
        message = JSON.parse(String(data)) as ServerMessage;
      } catch {
        this.#log?.warn("agent transport: a message that is not JSON; ignored");
        return;
      }
      if (message.type !== "control") return;
      const live = this.#live.get(identityKey(message.ref));
      const outcome: Outcome = live === undefined ? "StaleTarget" : live.onControl(message.control);
      this.#send({ type: "outcome", id: message.id, outcome });
    });
    ws.on("error", (error) => this.#log?.debug({ err: error }, "agent transport error"));
    ws.on("close", () => {
      if (this.#ws === ws) this.#ws = undefined;
      if (this.#closed || url !== this.#url) return;
      const wait = Math.min(5_000, 100 * 2 ** failures);
      this.#retry = setTimeout(() => this.#dial(url, failures + 1), wait);
    });
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
    ws.send(JSON.stringify(message));
  }

  register(registration: LiveRegistration): void {
    this.#live.set(identityKey(registration.ref), registration);
    this.#send(announce(registration));
  }

  record(ref: AttemptIdentity, entry: TranscriptEntry): void {
    this.#send({ type: "transcript", ref, entry });
  }

  end(ref: AttemptIdentity): void {
    this.#live.delete(identityKey(ref));
    this.#send({ type: "ended", ref });
  }

  close(): void {
    this.#closed = true;
    this.disconnect();
    for (const done of this.#opened.splice(0)) done();
  }
}

function announce(r: LiveRegistration): WorkerMessage {
  return {
    type: "live",
    ref: r.ref,
    namespace: r.namespace,
    workflow_id: r.workflowId,
    capabilities: r.capabilities,
  };
}
