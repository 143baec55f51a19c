/**
 * The agent transport's bounds, in one place: its path, how long an intervention waits for
 * its answer, how many sockets and live attempts it holds, how often it pings. Every bound is
 * here so that the hub's code reads as behaviour, and tests shrink them through `AgentLimits`.
 */

import { MAX_CONCURRENCY } from "../../protocol/worker-stream/decode.ts";

export const AGENT_PATH = "/agents/connect";
/** How long an intervention waits for the owner's `ready` before it is StaleTarget. */
export const CONTROL_ANSWER_MS = 5_000;

/**
 * Agent sockets open at once, upgrades still being verified included. Each agent worker
 * process holds one; past the cap an upgrade is refused with 503 rather than holding file
 * descriptors for whoever opens the most.
 */
export const MAX_AGENT_SOCKETS = 1_024;

/**
 * Live attempts one socket may own. A worker process holds at most the concurrency its
 * hello may declare, so a socket owning more is not a worker: it is closed.
 */
export const MAX_LIVE_PER_SOCKET = MAX_CONCURRENCY;

/**
 * Every socket is pinged this often; one that has not answered the previous ping (a silent
 * peer, a half-open connection) is closed, so at most two intervals pass unanswered.
 */
export const PING_INTERVAL_MS = 15_000;

/** setTimeout's longest delay; a bearer expiring later is looked at again then. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface AgentLimits {
  readonly maxSockets: number;
  readonly maxLivePerSocket: number;
  readonly pingIntervalMs: number;
}

export const LIMITS: AgentLimits = {
  maxSockets: MAX_AGENT_SOCKETS,
  maxLivePerSocket: MAX_LIVE_PER_SOCKET,
  pingIntervalMs: PING_INTERVAL_MS,
};
