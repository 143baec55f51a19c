/**
 * One agent transport socket and the control round trip over it: a control is sent with a
 * random id answerable only on this socket; the worker answers `ready` when it holds the
 * control, and the server commits it (Applied) if its caller still waits, else withdraws it
 * (StaleTarget), so a caller told StaleTarget can rely on the control never being applied.
 */

import { randomUUID } from "node:crypto";
import type { WebSocket } from "ws";
import type { Outcome } from "../../protocol/agent-transport/interventions.ts";
import {
  type Control,
  encodeMessage,
  type ServerMessage,
} from "../../protocol/agent-transport/messages.ts";
import type { AttemptRef } from "../../protocol/attempt.ts";
import type { Principal } from "../auth/tokens.ts";
import { CONTROL_ANSWER_MS } from "./limits.ts";

/** One connected socket and everything it registered, freed together on close. */
export interface Link {
  readonly ws: WebSocket;
  readonly principal: Principal;
  /** Keys of the live attempts it owns. */
  readonly owned: Set<string>;
  /** Controls sent to it and not yet answered, by id. */
  readonly pending: Map<string, (outcome: Outcome) => void>;
  /** Answered since the last ping. */
  alive: boolean;
  /** A refusal is on its way: nothing more it sends is read. */
  closing: boolean;
  expiry: NodeJS.Timeout | undefined;
}

export function send(link: Link, message: ServerMessage): void {
  if (link.ws.readyState === link.ws.OPEN) link.ws.send(encodeMessage(message));
}

/** The worker holds the control ready: commit it if its caller still waits, else withdraw. */
export function ready(link: Link, id: string): void {
  const settle = link.pending.get(id);
  if (settle === undefined || link.ws.readyState !== link.ws.OPEN) {
    send(link, { type: "withdraw", id });
    settle?.("StaleTarget");
    return;
  }
  send(link, { type: "commit", id });
  settle("Applied");
}

/**
 * Sends a control to `link` and waits for its answer: `ready` commits it (Applied), no answer
 * within CONTROL_ANSWER_MS withdraws it (StaleTarget).
 */
export function ask(link: Link, ref: AttemptRef, control: Control): Promise<Outcome> {
  // Random, and answerable only on this socket: no other socket can settle it.
  const id = randomUUID();
  return new Promise<Outcome>((done) => {
    const timer = setTimeout(() => {
      settle("StaleTarget");
      send(link, { type: "withdraw", id });
    }, CONTROL_ANSWER_MS);
    const settle = (outcome: Outcome) => {
      clearTimeout(timer);
      link.pending.delete(id);
      done(outcome);
    };
    link.pending.set(id, settle);
    send(link, { type: "control", id, ref, control });
  });
}
