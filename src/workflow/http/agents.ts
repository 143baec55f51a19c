/**
 * Attempt intervention endpoints: `POST /workflows/attempts` lists the live attempts of a
 * workflow (agent attempts announced over the agent transport, and attempts gRPC workers
 * hold, with their advertised capabilities), `POST /workflows/intervene` sends one
 * intervention to one attempt and answers HTTP 200 with its outcome (`Applied`,
 * `CapabilityNotSupported`, `StaleTarget`), and `POST /workflows/transcript` reads an
 * attempt's transcript. Bodies are decoded once (a bad UUID, an unknown kind tag or a wrong
 * field type is a 400) and the bearer needs the namespace grant (403): those are HTTP
 * errors, never outcomes. The server stamps the bearer's subject and the time on every
 * intervention.
 */

import type { FastifyInstance } from "fastify";
import { integer, object, optional, u32, withDefault } from "../../common/decode/index.ts";
import { interventionKind } from "../../protocol/agent-transport/interventions.ts";
import { uuid } from "../../protocol/agent-transport/messages.ts";
import { namespaceName } from "../../protocol/namespace-name.ts";
import type { AgentHub } from "../agents/hub.ts";
import type { NamespaceRegistry } from "../namespaces/registry.ts";
import type { RunService } from "../runs/service.ts";
import { principalOf } from "./auth.ts";
import { grantedNamespace } from "./workflows.ts";

export const attemptsBody = object({ namespace: optional(namespaceName()), workflow_id: uuid() });

const attemptFields = {
  namespace: optional(namespaceName()),
  workflow_id: uuid(),
  run_id: uuid(),
  activity_id: u32(),
  attempt: u32(),
};
export const interveneBody = object({ ...attemptFields, kind: interventionKind });
/** The most entries one transcript answer holds when the caller asks for a page. */
export const TRANSCRIPT_PAGE_MAX = 10_000;

export const transcriptBody = object({
  ...attemptFields,
  /** Entries already read: the index of the first one answered. */
  after: withDefault(integer("u32"), 0),
  /** A page of at most this many (absent: every entry from `after`). */
  limit: optional(integer("u32", { min: 1, max: TRANSCRIPT_PAGE_MAX })),
});

/** An attempt a gRPC worker holds: listed, but it has no agent-transport connection. */
export interface GrpcAttempt {
  readonly ref: { run_id: string; activity_id: number; attempt: number };
  readonly capabilities: readonly string[];
}

export interface AgentRoles {
  readonly namespaces: NamespaceRegistry;
  readonly runs: RunService;
  readonly hub: AgentHub;
  /** Attempts of a run held by gRPC worker sessions. */
  readonly grpcAttempts: (runId: string) => readonly GrpcAttempt[];
}

export function agentRoutes(app: FastifyInstance, roles: AgentRoles): void {
  app.post(
    "/workflows/attempts",
    {
      config: {
        api: {
          summary: "List a workflow's live attempts and their capabilities",
          body: attemptsBody,
        },
      },
    },
    async (request) => {
      const body = attemptsBody.run(request.body, undefined);
      const namespace = grantedNamespace(roles, request, body.namespace);
      // The workflow must exist in the granted namespace (not-found otherwise).
      const run = await roles.runs.describe(namespace, body.workflow_id);
      const byKey = new Map<string, { ref: GrpcAttempt["ref"]; capabilities: readonly string[] }>();
      for (const a of roles.grpcAttempts(run.runId)) {
        byKey.set(`${a.ref.run_id}/${a.ref.activity_id}/${a.ref.attempt}`, a);
      }
      // An agent attempt's document-advertised capabilities are the ones interventions use.
      for (const a of roles.hub.attempts(namespace, body.workflow_id)) {
        byKey.set(`${a.ref.run_id}/${a.ref.activity_id}/${a.ref.attempt}`, a);
      }
      return {
        attempts: [...byKey.values()].map((a) => ({
          run_id: a.ref.run_id,
          activity_id: a.ref.activity_id,
          attempt: a.ref.attempt,
          capabilities: [...a.capabilities],
        })),
      };
    },
  );

  app.post(
    "/workflows/intervene",
    { config: { api: { summary: "Intervene on one live agent attempt", body: interveneBody } } },
    async (request) => {
      const body = interveneBody.run(request.body, undefined);
      const namespace = grantedNamespace(roles, request, body.namespace);
      const ref = { run_id: body.run_id, activity_id: body.activity_id, attempt: body.attempt };
      const outcome = await roles.hub.intervene(namespace, body.workflow_id, ref, {
        kind: body.kind,
        subject: principalOf(request).subject,
        at: new Date().toISOString(),
      });
      return { outcome: { outcome } };
    },
  );

  app.post(
    "/workflows/transcript",
    { config: { api: { summary: "Read an agent attempt's transcript", body: transcriptBody } } },
    async (request) => {
      const body = transcriptBody.run(request.body, undefined);
      const namespace = grantedNamespace(roles, request, body.namespace);
      await roles.runs.describe(namespace, body.workflow_id, body.run_id);
      const ref = { run_id: body.run_id, activity_id: body.activity_id, attempt: body.attempt };
      const all = await roles.hub.transcript(ref);
      const end = body.limit === undefined ? all.length : body.after + body.limit;
      return {
        entries: all.slice(body.after, end),
        next: end < all.length ? end : null,
      };
    },
  );
}
