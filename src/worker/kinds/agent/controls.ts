/**
 * How interventions reach a running agent attempt. Each attempt keeps a LoopState that
 * controls change between and during the loop's steps: a control is first prepared (is it
 * applicable now? a pending approval is reserved meanwhile) and applied only when the server
 * commits it (the two-step round trip of agent-link.ts). Cancel aborts the attempt, an
 * Interrupt message aborts the model call in flight, PauseResume holds the loop, UpdateBudget
 * changes the limits, RespondToApproval answers a waiting tool call.
 */

import type { Outcome } from "../../../protocol/agent-transport/interventions.ts";
import type { Control, TranscriptEntry } from "../../../protocol/agent-transport/messages.ts";
import type { Prepared } from "../../agent-link.ts";
import { ActivityError, abortError } from "../../handler.ts";
import type { AgentSpec } from "./spec.ts";

/** Why a model call in flight was aborted by an Interrupt message (not a cancel). */
export class Interrupted extends Error {}

/** Mutable state of one running attempt, changed by controls between and during steps. */
export class LoopState {
  paused = false;
  maxTokens: bigint | null;
  maxTurns: number;
  readonly queued: string[] = [];
  readonly approvals = new Map<string, (d: { approve: boolean; note: string | null }) => void>();
  inflight: AbortController | undefined;
  wake: (() => void) | undefined;

  constructor(spec: AgentSpec) {
    this.maxTokens = spec.max_tokens;
    this.maxTurns = spec.max_turns;
  }

  poke(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}

/**
 * Whether a control can be applied to the attempt now, and how: the outcome when it cannot,
 * else what applies it once the server commits it (see agent-link.ts). A pending approval is
 * reserved meanwhile, so two answers to one call cannot both be ready.
 */
export function prepareControl(
  control: Control,
  state: LoopState,
  cancel: AbortController,
  record: (e: TranscriptEntry) => void,
): Exclude<Outcome, "Applied"> | Prepared {
  if (cancel.signal.aborted) return "StaleTarget";
  const kind = control.kind;
  const held = (effect: () => void, release = () => {}): Prepared => ({
    release,
    apply: () => {
      if (cancel.signal.aborted) return;
      record({ type: "control", control });
      effect();
      state.poke();
    },
  });
  if (kind.kind !== "RespondToApproval") return held(() => applyControl(kind, state, cancel));
  const pending = state.approvals.get(kind.call_id);
  // No tool call waits under that id: the target is not (or no longer) there.
  if (pending === undefined) return "StaleTarget";
  state.approvals.delete(kind.call_id);
  return held(
    () => pending({ approve: kind.decision.decision === "Approve", note: kind.note }),
    () => {
      if (!cancel.signal.aborted) state.approvals.set(kind.call_id, pending);
    },
  );
}

type StateKind = Exclude<Control["kind"], { kind: "RespondToApproval" }>;

function applyControl(kind: StateKind, state: LoopState, cancel: AbortController): void {
  switch (kind.kind) {
    case "Cancel":
      // The code says `cancelled`; the run reads `cancelled: <reason>` from code and message.
      cancel.abort(new ActivityError("cancelled", kind.reason, { nonRetryable: true }));
      return;
    case "InjectMessage":
      state.queued.push(kind.text);
      if (kind.priority.priority === "Interrupt") state.inflight?.abort(new Interrupted());
      return;
    case "PauseResume":
      state.paused = kind.paused;
      return;
    case "UpdateBudget":
      if (kind.max_tokens !== null) state.maxTokens = kind.max_tokens;
      if (kind.max_turns !== null) state.maxTurns = kind.max_turns;
      return;
  }
}

/** Resolves when poked (a control arrived) or the attempt is cancelled. */
export function waitForPoke(state: LoopState, signal: AbortSignal): Promise<void> {
  return new Promise((done, fail) => {
    if (signal.aborted) return fail(abortError(signal));
    const onAbort = () => fail(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    state.wake = () => {
      signal.removeEventListener("abort", onAbort);
      done();
    };
  });
}
