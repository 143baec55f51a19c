/**
 * The server side of the agent transport. Agent workers hold one WebSocket each (path
 * `/agents/connect` on the HTTP listener, bearer with the `worker` grant) over which they
 * announce each live attempt with its advertised capabilities, append transcript entries, and
 * answer controls. The hub knows which connection owns which live attempt; an intervention
 * becomes a control sent to that owner, and its outcome is the owner's answer:
 * `StaleTarget` when no connection owns the attempt (finished, gRPC-only worker, killed
 * worker, transport off), the connection drops, or no answer comes in time. Transcript
 * entries are stored durably (the store's `agent_transcripts`, migration 5) in arrival order.
 */

import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { SkeinError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import { bearerToken } from "../auth/bearer.ts";
import { canAccessNamespace, type TokenVerifier } from "../auth/tokens.ts";
import { workflowError } from "../errors.ts";
import { rawRefusal } from "../http/errors.ts";
import type { TranscriptStore } from "../persistence/store.ts";
import {
  type AttemptIdentity,
  type Capability,
  type Control,
  controlJson,
  identityKey,
  type Outcome,
  type TranscriptEntry,
  type WorkerMessage,
} from "./control.ts";

export const AGENT_PATH = "/agents/connect";
/** How long an intervention waits for the owner's answer before it is StaleTarget. */
export const CONTROL_ANSWER_MS = 5_000;

export interface LiveAgentAttempt {
  readonly ref: AttemptIdentity;
  readonly namespace: string;
  readonly workflowId: string;
  readonly capabilities: readonly Capability[];
}

interface Owned extends LiveAgentAttempt {
  readonly socket: WebSocket;
}

export class AgentHub {
  readonly enabled: boolean;
  readonly #verify: TokenVerifier;
  readonly #log: Logger;
  readonly #live = new Map<string, Owned>();
  readonly #transcripts: TranscriptStore;
  /** Appends in arrival order: each waits for the one before (a pool may reorder otherwise). */
  #writes: Promise<void> = Promise.resolve();
  readonly #pending = new Map<number, (outcome: Outcome) => void>();
  readonly #wss: WebSocketServer;
  #nextId = 1;

  constructor(options: {
    enabled: boolean;
    verify: TokenVerifier;
    logger: Logger;
    transcripts: TranscriptStore;
  }) {
    this.enabled = options.enabled;
    this.#transcripts = options.transcripts;
    this.#verify = options.verify;
    this.#log = options.logger;
    this.#wss = new WebSocketServer({ noServer: true, maxPayload: 4 * 1024 * 1024 });
    // A handshake ws refuses (bad key, version, method) gets the error body too.
    this.#wss.on("wsClientError", (error, socket) => {
      const refusal = workflowError("bad_request", `WebSocket handshake: ${error.message}`);
      socket.end(rawRefusal(refusal), () => socket.destroy());
    });
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
    this.#verify(token).then(
      (principal) => {
        if (!principal.worker) {
          refuse(workflowError("forbidden", "the bearer lacks the worker grant"));
          return;
        }
        this.#wss.handleUpgrade(request, socket, head, (ws) =>
          this.#serve(ws, (namespace) => canAccessNamespace(principal, namespace)),
        );
      },
      () => refuse(workflowError("unauthenticated", "the bearer is not a valid token")),
    );
  }

  #serve(ws: WebSocket, mayServe: (namespace: string) => boolean): void {
    // Every attempt this connection has announced: only it may write their transcripts.
    const mine = new Set<string>();
    ws.on("message", (data) => {
      let message: WorkerMessage;
      try {
        message = JSON.parse(String(data)) as WorkerMessage;
      } catch {
        ws.close(1003, "not JSON");
        return;
      }
      switch (message.type) {
        case "live": {
          if (!mayServe(message.namespace)) break;
          const key = identityKey(message.ref);
          mine.add(key);
          this.#live.set(key, {
            ref: message.ref,
            namespace: message.namespace,
            workflowId: message.workflow_id,
            capabilities: message.capabilities,
            socket: ws,
          });
          break;
        }
        case "ended": {
          const key = identityKey(message.ref);
          if (this.#live.get(key)?.socket === ws) this.#live.delete(key);
          break;
        }
        case "transcript":
          // Only the owner of a live (or once-live) attempt may write its transcript.
          if (mine.has(identityKey(message.ref))) this.#append(message.ref, message.entry);
          break;
        case "outcome": {
          const answer = this.#pending.get(message.id);
          this.#pending.delete(message.id);
          answer?.(message.outcome);
          break;
        }
      }
    });
    ws.on("close", () => {
      for (const key of mine) if (this.#live.get(key)?.socket === ws) this.#live.delete(key);
    });
    ws.on("error", (error) => this.#log.warn({ err: error }, "agent transport error"));
  }

  #append(ref: AttemptIdentity, entry: unknown): void {
    const at = Date.now();
    const row = { runId: ref.run_id, activityId: ref.activity_id, attempt: ref.attempt };
    this.#writes = this.#writes
      .then(() => this.#transcripts.append(row, JSON.stringify(entry), at))
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
  async transcript(ref: AttemptIdentity): Promise<unknown[]> {
    await this.#writes;
    const rows = await this.#transcripts.list({
      runId: ref.run_id,
      activityId: ref.activity_id,
      attempt: ref.attempt,
    });
    return rows.map((text) => JSON.parse(text) as unknown);
  }

  /** Waits for the entries received so far to be stored (shutdown). */
  flushed(): Promise<void> {
    return this.#writes;
  }

  /** Sends a control to the attempt's owner and waits for its outcome. */
  async intervene(
    namespace: string,
    workflowId: string,
    ref: AttemptIdentity,
    control: Control,
  ): Promise<Outcome> {
    const owned = this.#live.get(identityKey(ref));
    if (
      owned === undefined ||
      owned.namespace !== namespace ||
      owned.workflowId !== workflowId ||
      owned.socket.readyState !== owned.socket.OPEN
    ) {
      return "StaleTarget";
    }
    if (!owned.capabilities.includes(control.kind.kind)) return "CapabilityNotSupported";
    const id = this.#nextId++;
    return new Promise<Outcome>((done) => {
      const timer = setTimeout(() => settle("StaleTarget"), CONTROL_ANSWER_MS);
      const onClose = () => settle("StaleTarget");
      const settle = (outcome: Outcome) => {
        clearTimeout(timer);
        owned.socket.off("close", onClose);
        this.#pending.delete(id);
        done(outcome);
      };
      this.#pending.set(id, settle);
      owned.socket.on("close", onClose);
      owned.socket.send(controlJson({ type: "control", id, ref, control }));
    });
  }

  /**
   * The engine gave the attempt up (see dispatch.ts): a Cancel control, stamped by the
   * server itself (subject `skein`), to its owner if it is a live agent attempt.
   */
  cancelAttempt(ref: AttemptIdentity, reason: string): void {
    const owned = this.#live.get(identityKey(ref));
    if (owned === undefined || owned.socket.readyState !== owned.socket.OPEN) return;
    const control: Control = {
      kind: { kind: "Cancel", reason },
      subject: "skein",
      at: new Date().toISOString(),
    };
    // Id 0: nobody waits for the answer.
    owned.socket.send(controlJson({ type: "control", id: 0, ref: owned.ref, control }));
  }

  close(): void {
    for (const ws of this.#wss.clients) ws.terminate();
    this.#wss.close();
  }
}

export type { TranscriptEntry };
