/**
 * The intervention kinds and capabilities, as data shared by the server and the agent worker.
 * `interventionKind` decodes the `kind` field of `POST /workflows/intervene` exactly as the
 * spec's kind table says (tag field `kind`; nested tagged `priority` and `decision`; nullable
 * budget fields and approval note). The messages that carry them over the agent transport
 * are in messages.ts; the attempt they target is `AttemptRef` (../attempt.ts).
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
