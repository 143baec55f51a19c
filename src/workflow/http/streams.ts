/**
 * The live streams of the run console (server-sent events, see sse.ts):
 * `POST /workflows/history/stream` sends a run's durable events from index `after` on and
 * then each new one as its commit lands, ending with `end` (`{status}`) once the run has
 * ended and everything is sent; `POST /workflows/transcript/stream` does the same for an
 * agent attempt's transcript entries, ending once the attempt is no longer live. Refusals
 * come before the stream starts, as normal JSON errors (400, 403, 404 `run_not_found`).
 *
 * A stream reads the store again only when woken by a change signal (runs/changes.ts: a
 * commit of the run on this node, a stored transcript entry) or, where no signal can come,
 * by a bounded backstop: a run another cluster node holds is read every REMOTE_POLL_MS; an
 * attempt's liveness (which has no hook) is checked in memory every LIVENESS_POLL_MS. Reads
 * of one stream are at least MIN_READ_GAP_MS apart, so a busy run cannot make a read storm.
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyInstance, FastifyReply } from "fastify";
import { integer, object, optional, u32, withDefault } from "../../common/decode/index.ts";
import { uuid as transportUuid } from "../../protocol/agent-transport/messages.ts";
import { type AttemptRef, attemptKey } from "../../protocol/attempt.ts";
import { namespaceName } from "../../protocol/namespace-name.ts";
import type { AgentHub } from "../agents/hub.ts";
import type { NamespaceRegistry } from "../namespaces/registry.ts";
import {
  attemptChangeKey,
  type ChangeSignals,
  runKey,
  type Subscription,
} from "../runs/changes.ts";
import type { RunService } from "../runs/service.ts";
import type { GrpcAttempt } from "./agents.ts";
import { eventJson } from "./run-json.ts";
import type { EventStream, EventStreams } from "./sse.ts";
import { grantedNamespace, uuid } from "./workflows.ts";

/** A run held by another node gives no signal here: read every this often. */
export const REMOTE_POLL_MS = 1_000;
/**
 * A run held here signals its commits, so a quiet wait this long only checks whether the
 * run has moved to another node (then the stream polls it at REMOTE_POLL_MS).
 */
export const HELD_BACKSTOP_MS = 5_000;
/** An attempt's end has no hook: its liveness (in memory) is checked this often. */
export const LIVENESS_POLL_MS = 1_000;
export const MIN_READ_GAP_MS = 100;
/** The most events one read of a stream takes from storage; a longer backlog takes several. */
const STREAM_READ_MAX = 1_000;

const after = withDefault(integer("u32"), 0);

const historyStreamBody = object({
  namespace: optional(namespaceName()),
  workflow_id: uuid(),
  run_id: optional(uuid()),
  after,
});

const transcriptStreamBody = object({
  namespace: optional(namespaceName()),
  workflow_id: transportUuid(),
  run_id: transportUuid(),
  activity_id: u32(),
  attempt: u32(),
  after,
});

export interface StreamRoles {
  readonly namespaces: NamespaceRegistry;
  readonly runs: RunService;
  readonly changes: ChangeSignals;
  readonly streams: EventStreams;
}

/** Waits out the rest of the minimum gap since `last` (returns at once when aborted). */
async function gap(last: number, signal: AbortSignal): Promise<void> {
  const rest = last + MIN_READ_GAP_MS - Date.now();
  if (rest > 0) await sleep(rest, undefined, { signal }).catch(() => {});
}

/**
 * Serves one stream woken by `key`'s change signals. The subscription is taken before the
 * stream's first read, so a change landing during that read still wakes it, and it is
 * closed however the stream ends.
 */
async function serveOnChanges(
  roles: StreamRoles,
  reply: FastifyReply,
  key: string,
  loop: (stream: EventStream, changes: Subscription) => Promise<void>,
): Promise<void> {
  const changes = roles.changes.subscribe(key);
  try {
    await roles.streams.serve(reply, (stream) => loop(stream, changes));
  } finally {
    changes.close();
  }
}

export function historyStreamRoute(app: FastifyInstance, roles: StreamRoles): void {
  app.post(
    "/workflows/history/stream",
    {
      config: {
        api: {
          summary: "Stream a run's history as server-sent events, live until the run ends",
          body: historyStreamBody,
          responseType: "text/event-stream",
        },
      },
    },
    async (request, reply) => {
      const body = historyStreamBody.run(request.body, undefined);
      const namespace = grantedNamespace(roles, request, body.namespace);
      const run = await roles.runs.describe(namespace, body.workflow_id, body.run_id);
      await serveOnChanges(roles, reply, runKey(run.runId), (stream, changes) =>
        sendHistory(roles.runs, stream, changes, { namespace, run, from: body.after }),
      );
    },
  );
}

async function sendHistory(
  runs: RunService,
  stream: EventStream,
  changes: Subscription,
  at: { namespace: string; run: { workflowId: string; runId: string }; from: number },
): Promise<void> {
  let sent = at.from;
  let lastRead = 0;
  let read = true;
  while (!stream.signal.aborted) {
    if (read) {
      await gap(lastRead, stream.signal);
      lastRead = Date.now();
      // The record is read before the events: once it shows an end, the events hold it.
      // Only the events not yet sent are read, a bounded slice at a time.
      const { run, events } = await runs.history(at.namespace, at.run.workflowId, at.run.runId, {
        after: sent,
        limit: STREAM_READ_MAX,
      });
      for (const event of events) {
        if (stream.signal.aborted) return;
        await stream.send("history", { index: sent++, event: eventJson(event) });
      }
      if (events.length === STREAM_READ_MAX) continue;
      if (run.status !== "Running" && run.status !== "Paused") {
        await stream.send("end", { status: run.status });
        return;
      }
    }
    const held = runs.held(at.run.runId);
    const signalled = await changes.wait(held ? HELD_BACKSTOP_MS : REMOTE_POLL_MS, stream.signal);
    read = signalled || !held || !runs.held(at.run.runId);
  }
}

export interface TranscriptStreamRoles extends StreamRoles {
  readonly hub: AgentHub;
  readonly grpcAttempts: (runId: string) => readonly GrpcAttempt[];
}

export function transcriptStreamRoute(app: FastifyInstance, roles: TranscriptStreamRoles): void {
  app.post(
    "/workflows/transcript/stream",
    {
      config: {
        api: {
          summary: "Stream an agent attempt's transcript as server-sent events, live",
          body: transcriptStreamBody,
          responseType: "text/event-stream",
        },
      },
    },
    async (request, reply) => {
      const body = transcriptStreamBody.run(request.body, undefined);
      const namespace = grantedNamespace(roles, request, body.namespace);
      await roles.runs.describe(namespace, body.workflow_id, body.run_id);
      const ref = { run_id: body.run_id, activity_id: body.activity_id, attempt: body.attempt };
      const key = attemptKey(ref);
      // Live while an agent connection owns it or a gRPC worker holds it: entries may come.
      const live = () =>
        roles.hub.attempts(namespace, body.workflow_id).some((a) => attemptKey(a.ref) === key) ||
        roles.grpcAttempts(ref.run_id).some((a) => attemptKey(a.ref) === key);
      await serveOnChanges(roles, reply, attemptChangeKey(ref), (stream, changes) =>
        sendTranscript(roles.hub, stream, changes, { ref, live, from: body.after }),
      );
    },
  );
}

async function sendTranscript(
  hub: AgentHub,
  stream: EventStream,
  changes: Subscription,
  at: { ref: AttemptRef; live: () => boolean; from: number },
): Promise<void> {
  let sent = at.from;
  let lastRead = 0;
  let wasLive = true;
  let read = true;
  while (!stream.signal.aborted) {
    if (read) {
      await gap(lastRead, stream.signal);
      lastRead = Date.now();
      // Liveness before the read: entries stored before the attempt ended are in it.
      wasLive = at.live();
      const entries = await hub.transcript(at.ref);
      for (; sent < entries.length && !stream.signal.aborted; sent++) {
        await stream.send("entry", { index: sent, entry: entries[sent] });
      }
      if (!wasLive) {
        await stream.send("end", {});
        return;
      }
    }
    const signalled = await changes.wait(LIVENESS_POLL_MS, stream.signal);
    read = signalled || !at.live();
  }
}
