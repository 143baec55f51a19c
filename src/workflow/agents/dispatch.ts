/**
 * The engine and its matcher, seen from the agent transport. `withAgentCancel` is the
 * engine's dispatcher with the transport beside it: whenever the engine gives up an attempt
 * (its run was cancelled, by a caller, a deadline or a cancelled parent; a timeout; a
 * superseded retry), the matcher sends its gRPC cancel-activity frame as before, and an agent
 * attempt's owner also gets a Cancel control over the agent transport, so workflow
 * cancellation reaches every live agent attempt of the run and of its descendants.
 * `matcherAuthority` tells the hub who holds an attempt, so a socket owns only attempts its
 * own worker holds.
 */

import { type AttemptRef, attemptKey } from "../../protocol/attempt.ts";
import type { Dispatcher } from "../engine/dispatcher.ts";
import type { Matcher } from "../matching/matcher.ts";
import type { AgentHub, AttemptAuthority } from "./hub.ts";

export function withAgentCancel(matcher: Required<Dispatcher>, hub: AgentHub): Dispatcher {
  return {
    offer: (task) => matcher.offer(task),
    release(ref, reason) {
      hub.cancelAttempt(ref, reason);
      matcher.release(ref, reason);
    },
    flush: () => matcher.flush(),
    liveAttempts: (runId) => matcher.liveAttempts(runId),
    // Still waiting for a worker, so no agent connection holds it: nothing to cancel there.
    withdraw: (ref) => matcher.withdraw(ref),
  };
}

/**
 * Whether a session holds an attempt comes from the matcher's attempts read (indexed by run);
 * the session's namespace from the session list, read only once the session id matched.
 */
export function matcherAuthority(
  matcher: Pick<Matcher, "liveAttempts" | "workers">,
  workflowOf: AttemptAuthority["workflowOf"],
): AttemptAuthority {
  return {
    heldBy(ref: AttemptRef, sessionId: string) {
      const key = attemptKey(ref);
      const held = matcher
        .liveAttempts(ref.run_id)
        .some((a) => a.sessionId === sessionId && attemptKey(a.ref) === key);
      if (!held) return undefined;
      return matcher.workers().find((w) => w.sessionId === sessionId)?.namespace;
    },
    workflowOf,
  };
}
