/**
 * The engine's dispatcher with the agent transport beside it: whenever the engine gives up
 * an attempt (its run was cancelled, by a caller, a deadline or a cancelled parent; a
 * timeout; a superseded retry), the matcher sends its gRPC cancel-activity frame as before,
 * and an agent attempt's owner also gets a Cancel control over the agent transport, so
 * workflow cancellation reaches every live agent attempt of the run and of its descendants.
 */

import type { Dispatcher } from "../engine/engine.ts";
import type { AgentHub } from "./hub.ts";

export function withAgentCancel(matcher: Required<Dispatcher>, hub: AgentHub): Dispatcher {
  return {
    offer: (task) => matcher.offer(task),
    release(ref, reason) {
      hub.cancelAttempt(ref, reason);
      matcher.release(ref, reason);
    },
    flush: () => matcher.flush(),
    liveAttempts: (runId) => matcher.liveAttempts(runId),
  };
}
