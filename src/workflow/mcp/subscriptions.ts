/**
 * A session's resource subscriptions. `resources/subscribe` on a run resource (its describe
 * view or its history) follows the run through the server's change signals — a commit that
 * appends the run's events on this node, the signal that wakes the history stream — never by
 * polling, and each commit becomes `notifications/resources/updated` for the subscribed URI,
 * at most one every UPDATE_GAP_MS (a burst of commits is one update, sent once the gap has
 * passed). The run's end is such a commit, so a follower learns of it at once. A session holds
 * at most SUBSCRIPTIONS_MAX; they end with `resources/unsubscribe` or with the session.
 */

import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { type ChangeSignals, runKey } from "../runs/changes.ts";
import type { Subscriptions } from "./protocol.ts";

/** Subscriptions one session may hold. */
export const SUBSCRIPTIONS_MAX = 100;
/** The least time between two updates of one subscription. */
export const UPDATE_GAP_MS = 100;

/** Sends the update of `uri`, a resource of a run in `namespace`. */
export type Notify = (uri: string, namespace: string) => void;

export class RunSubscriptions implements Subscriptions {
  readonly #follows = new Map<string, () => void>();
  readonly #changes: ChangeSignals;
  readonly #notify: Notify;

  constructor(changes: ChangeSignals, notify: Notify) {
    this.#changes = changes;
    this.#notify = notify;
  }

  subscribe(uri: string, run: { namespace: string; runId: string }): void {
    if (this.#follows.has(uri)) return;
    if (this.#follows.size >= SUBSCRIPTIONS_MAX) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `this session holds its maximum of ${SUBSCRIPTIONS_MAX} subscriptions; unsubscribe first`,
        { code: "mcp_subscriptions_full" },
      );
    }
    let timer: NodeJS.Timeout | undefined;
    let last = 0;
    const send = () => {
      timer = undefined;
      last = Date.now();
      this.#notify(uri, run.namespace);
    };
    const unlisten = this.#changes.listen(runKey(run.runId), () => {
      if (timer === undefined) timer = setTimeout(send, last + UPDATE_GAP_MS - Date.now());
    });
    this.#follows.set(uri, () => {
      unlisten();
      clearTimeout(timer);
    });
  }

  unsubscribe(uri: string): void {
    this.#follows.get(uri)?.();
    this.#follows.delete(uri);
  }

  close(): void {
    for (const stop of this.#follows.values()) stop();
    this.#follows.clear();
  }
}
