/**
 * The intervention kinds and the agent-transport messages, as data shared by the server and
 * the agent worker. `interventionKind` decodes the `kind` field of `POST /workflows/intervene`
 * exactly as the spec's kind table says (tag field `kind`; nested tagged `priority` and
 * `decision`; nullable budget fields and approval note). A control is an intervention
 * stamped by the server with the issuing subject and the time; the worker records every
 * control in the attempt's transcript and answers with an outcome.
 */

import {
  boolean,
  type Decoded,
  nullable,
  string,
  tagged,
  u32,
  u64,
} from "../../common/decode/index.ts";

/** The capability names an agent action may advertise; the spec names `Cancel`. */
export const CAPABILITIES = [
  "Cancel",
  "InjectMessage",
  "PauseResume",
  "UpdateBudget",
  "RespondToApproval",
] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const OUTCOMES = ["Applied", "CapabilityNotSupported", "StaleTarget"] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const interventionKind = tagged("kind", {
  Cancel: { reason: string() },
  InjectMessage: {
    text: string(),
    priority: tagged("priority", { Normal: {}, Interrupt: {} }),
  },
  PauseResume: { paused: boolean() },
  UpdateBudget: { max_tokens: nullable(u64()), max_turns: nullable(u32()) },
  RespondToApproval: {
    call_id: string({ minBytes: 1 }),
    decision: tagged("decision", { Approve: {}, Deny: {} }),
    note: nullable(string()),
  },
});

export type InterventionKind = Decoded<typeof interventionKind>;

/** Each kind needs the capability of its own name. */
export function capabilityOf(kind: InterventionKind): Capability {
  return kind.kind;
}

/** An intervention as the worker receives it: the kind, who issued it and when. */
export interface Control {
  readonly kind: InterventionKind;
  readonly subject: string;
  /** RFC 3339 time the server accepted it. */
  readonly at: string;
}

export interface AttemptIdentity {
  readonly run_id: string;
  readonly activity_id: number;
  readonly attempt: number;
}

export function identityKey(ref: AttemptIdentity): string {
  return `${ref.run_id}/${ref.activity_id}/${ref.attempt}`;
}

/** A transcript entry: what happened in the loop, in order. */
export interface TranscriptEntry {
  readonly type:
    | "model_turn"
    | "user_turn"
    | "tool_call"
    | "tool_result"
    | "approval"
    | "control"
    | "interrupted"
    | "end";
  readonly [field: string]: unknown;
}

/** Worker → server messages over the agent transport. */
export type WorkerMessage =
  | {
      readonly type: "live";
      readonly ref: AttemptIdentity;
      readonly namespace: string;
      readonly workflow_id: string;
      readonly capabilities: readonly Capability[];
    }
  | { readonly type: "ended"; readonly ref: AttemptIdentity }
  | { readonly type: "transcript"; readonly ref: AttemptIdentity; readonly entry: TranscriptEntry }
  | { readonly type: "outcome"; readonly id: number; readonly outcome: Outcome };

/** Server → worker messages. */
export type ServerMessage = {
  readonly type: "control";
  readonly id: number;
  readonly ref: AttemptIdentity;
  /** bigint budget values travel as JSON numbers. */
  readonly control: Control;
};

/** JSON text with bigint values written as numbers. */
export function controlJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? Number(v) : v));
}
