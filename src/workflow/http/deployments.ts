/**
 * Worker deployment endpoints (spec endpoints 1-6): records under `/worker-deployments` and
 * the joined managed view at `/workers/managed`. Every one of them, reads included, needs
 * `deployments.enabled` (else 403 `deployments_disabled`) and a bearer with the `deploy`
 * grant (else 403 `forbidden`), and sees only the records of its namespaces (the Scope the
 * service checks: docs/deployments.md). Handlers decode once, then make one call on the
 * DeploymentService, which commits and then applies the change on this node.
 */

import type { FastifyInstance, FastifyRequest } from "fastify";
import {
  decodeOrThrow,
  map,
  object,
  refine,
  string,
  withDefault,
} from "../../common/decode/index.ts";
import { canAccessNamespace } from "../auth/tokens.ts";
import { tailLines } from "../deployments/log-tail.ts";
import {
  deploymentBody,
  deploymentJson,
  deploymentName,
  desiredStateBody,
  type Undecodable,
} from "../deployments/record.ts";
import {
  type DeploymentService,
  logFileOf,
  type ManagedWorker,
  type Scope,
} from "../deployments/service.ts";
import { workflowError } from "../errors.ts";
import type { ProcessStatus } from "../supervisor/supervisor.ts";
import { forbidden, principalOf } from "./auth.ts";

function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

export function processJson(status: ProcessStatus | undefined, currentRevision: number) {
  if (status === undefined) {
    return {
      state: "stopped",
      pid: null,
      started_at: null,
      restarts: 0,
      last_exit: null,
      running_revision: null,
      current_launch: false,
      next_start_at: null,
      last_backoff_ms: null,
    };
  }
  return {
    state: status.state,
    pid: status.pid,
    started_at: iso(status.startedAt),
    restarts: status.restarts,
    last_exit:
      status.lastExit === null
        ? null
        : {
            code: status.lastExit.code,
            signal: status.lastExit.signal,
            at: iso(status.lastExit.at),
          },
    running_revision: status.revision,
    current_launch: status.pid !== null && status.revision === currentRevision,
    next_start_at: iso(status.nextStartAt),
    last_backoff_ms: status.lastBackoffMs,
  };
}

function managedJson(m: ManagedWorker) {
  const d = m.deployment;
  return {
    name: d.name,
    desired: d.desired,
    node: d.node,
    runs_here: m.runsHere,
    revision: d.revision,
    task_queue: d.task_queue,
    ...processJson(m.process, d.revision),
  };
}

/** `?lines=N`: how many of the log's last lines (1..1000, default 200). */
const logsQuery = object({
  lines: withDefault(
    refine(map(string({ pattern: /^[0-9]{1,7}$/, expected: "line count 1..1000" }), Number), (n) =>
      n >= 1 && n <= 1000 ? undefined : "must be between 1 and 1000",
    ),
    200,
  ),
});

function undecodableJson(u: Undecodable) {
  return { name: u.name, reason: u.reason };
}

export function deploymentRoutes(
  app: FastifyInstance,
  service: DeploymentService,
  enabled: boolean,
): void {
  /** The caller's Scope, once deployments are on and the bearer has the deploy grant. */
  const guard = (request: FastifyRequest): Scope => {
    if (!enabled) {
      throw workflowError(
        "deployments_disabled",
        "worker deployments are off (deployments.enabled = false)",
      );
    }
    const principal = principalOf(request);
    if (!principal.deploy) forbidden("the bearer lacks the deploy grant");
    return {
      all: principal.namespaces === "*",
      may: (namespace) => canAccessNamespace(principal, namespace),
    };
  };
  const nameOf = (request: FastifyRequest) =>
    decodeOrThrow(deploymentName, (request.params as { name: string }).name, {
      parent: undefined,
      key: "name",
    });

  app.get(
    "/worker-deployments",
    {
      config: { api: { summary: "List worker deployment records (and rows that do not decode)" } },
    },
    async (request) => {
      const { deployments, undecodable } = await service.list(guard(request));
      return {
        deployments: deployments.map(deploymentJson),
        undecodable: undecodable.map(undecodableJson),
      };
    },
  );

  app.get(
    "/worker-deployments/:name",
    { config: { api: { summary: "Read one worker deployment record" } } },
    async (request) => {
      const scope = guard(request);
      return { deployment: deploymentJson(await service.get(nameOf(request), scope)) };
    },
  );

  app.get(
    "/worker-deployments/:name/logs",
    {
      config: {
        api: { summary: "The last lines of a deployment's worker log on this node (?lines=N)" },
      },
    },
    async (request) => {
      const scope = guard(request);
      const name = nameOf(request);
      const { lines } = logsQuery.run(request.query, undefined);
      // Read as GET of the record is: absent or outside the bearer's namespaces is a 404.
      await service.get(name, scope);
      return {
        name,
        node_id: service.nodeId,
        lines: await tailLines(logFileOf(service.dataDir, name), lines),
      };
    },
  );

  app.put(
    "/worker-deployments/:name",
    {
      config: {
        api: { summary: "Create or replace a worker deployment record", body: deploymentBody },
      },
    },
    async (request) => {
      const scope = guard(request);
      const name = nameOf(request);
      const body = deploymentBody.run(request.body, undefined);
      const r = await service.put(name, body, scope);
      return {
        outcome: r.outcome,
        deployment: deploymentJson(r.deployment),
        process: processJson(r.process, r.deployment.revision),
      };
    },
  );

  app.post(
    "/worker-deployments/:name/desired-state",
    {
      config: {
        api: {
          summary: "Set a deployment's desired state (running or stopped)",
          body: desiredStateBody,
        },
      },
    },
    async (request) => {
      const scope = guard(request);
      const name = nameOf(request);
      const { desired } = desiredStateBody.run(request.body, undefined);
      const r = await service.setDesired(name, desired, scope);
      return {
        name,
        desired: r.deployment.desired,
        applied: processJson(r.process, r.deployment.revision),
      };
    },
  );

  app.delete(
    "/worker-deployments/:name",
    { config: { api: { summary: "Delete a worker deployment record and stop its worker" } } },
    async (request) => {
      const scope = guard(request);
      const r = await service.delete(nameOf(request), scope);
      const d = r.deployment;
      return {
        existed: true,
        deployment: "reason" in d ? undecodableJson(d) : deploymentJson(d),
      };
    },
  );

  app.get(
    "/workers/managed",
    {
      config: {
        api: {
          summary: "Managed workers: durable records joined with this node's supervised processes",
        },
      },
    },
    async (request) => {
      const { managed, undecodable } = await service.managed(guard(request));
      return {
        node_id: service.nodeId,
        managed: managed.map(managedJson),
        undecodable: undecodable.map(undecodableJson),
      };
    },
  );
}
