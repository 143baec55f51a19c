/**
 * The workflow server's HTTP application, built in one place: the listener's bounds and
 * edge refusals (http/edge.ts), the JSON body parser, error encoding and bearer auth are
 * installed first, then each area's routes, each handed only
 * the roles it calls (the namespace registry, the definition registry and the run service;
 * the supervisor as it lands). Route modules never reach storage directly. The app is returned unstarted so the
 * node (server.ts) decides where it listens and tests may `inject`.
 */

import Fastify, { type FastifyInstance, LogController } from "fastify";
import { type Logger, lazyChildLogger } from "../common/log.ts";
import type { AgentHub } from "./agents/hub.ts";
import type { TokenVerifier } from "./auth/tokens.ts";
import { installRouting, type RoutingRoles } from "./cluster/routing.ts";
import type { DeploymentService } from "./deployments/service.ts";
import { type AdminRoles, adminRoutes } from "./http/admin.ts";
import { agentRoutes, type GrpcAttempt } from "./http/agents.ts";
import { installAuth } from "./http/auth.ts";
import { definitionVersionRoutes } from "./http/definition-versions.ts";
import { deploymentRoutes } from "./http/deployments.ts";
import { installEdge, type ListenerLimits, listenerOptions } from "./http/edge.ts";
import { installErrorHandling } from "./http/errors.ts";
import { healthRoutes } from "./http/health.ts";
import { installJson } from "./http/json.ts";
import { metricsRoutes } from "./http/metrics.ts";
import { namespaceRoutes } from "./http/namespaces.ts";
import { installOpenApi } from "./http/openapi.ts";
import { EventStreams } from "./http/sse.ts";
import { historyStreamRoute, transcriptStreamRoute } from "./http/streams.ts";
import { type TaskQueueReader, taskQueueRoutes } from "./http/task-queues.ts";
import { workflowRoutes } from "./http/workflows.ts";
import { installMcp, type McpSettings } from "./mcp/endpoint.ts";
import { toolMeter } from "./metrics/mcp-tools.ts";
import type { WorkflowMetrics } from "./metrics/registry.ts";
import type { NamespaceRegistry } from "./namespaces/registry.ts";
import { ChangeSignals } from "./runs/changes.ts";
import type { DefinitionRegistry } from "./runs/definitions.ts";
import type { RunService } from "./runs/service.ts";
import type { UiAssets } from "./ui/assets.ts";
import { uiRoutes } from "./ui/routes.ts";

export interface AppRoles {
  readonly logger: Logger;
  readonly verify: TokenVerifier;
  /** Operator actions (`POST /admin/backup`). */
  readonly admin: AdminRoles;
  /** The node's metrics: HTTP requests are counted and `GET /metrics` serves them all. */
  readonly metrics: WorkflowMetrics;
  readonly namespaces: NamespaceRegistry;
  readonly maxBodyBytes: number;
  /** The connection cap and headers timeout of the listener. */
  readonly listener: ListenerLimits;
  /** Worker deployments; their routes refuse while `enabled` is false. */
  readonly deployments?: { readonly service: DeploymentService; readonly enabled: boolean };
  /** Definitions and runs. */
  readonly workflows: { readonly definitions: DefinitionRegistry; readonly runs: RunService };
  /** The matcher's workers and backlogs (task-queue describe, describe's pending activities). */
  readonly queues: TaskQueueReader;
  /** The agent transport's hub and the gRPC attempts of a run, for the intervention routes. */
  readonly agents: {
    readonly hub: AgentHub;
    readonly grpcAttempts: (runId: string) => readonly GrpcAttempt[];
  };
  /** Cluster mode: requests for runs whose shard another node serves go there. */
  readonly routing?: RoutingRoles;
  /** The run console's files, served at `/ui` (docs/ui.md). */
  readonly ui?: UiAssets;
  /** Signals of durable changes that wake the live streams and the MCP sessions. */
  readonly changes?: ChangeSignals;
  /** The MCP endpoint (`[mcp]`), served when enabled; its tools call the routes above. */
  readonly mcp?: McpSettings;
}

export function buildApp(roles: AppRoles): FastifyInstance {
  const app = Fastify({
    loggerInstance: roles.logger,
    // Per-request lines are off: refusals are answered, 5xx are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    // The app's logger is pino (`loggerInstance`), so its children are.
    childLoggerFactory: (logger, bindings, options) =>
      lazyChildLogger(logger as Logger, bindings, options as Record<string, unknown>),
    bodyLimit: roles.maxBodyBytes,
    ...listenerOptions(roles.listener),
  }) as unknown as FastifyInstance;
  // Before every route: it sees each one as Fastify registers it.
  installOpenApi(app);
  installEdge(app, roles.listener);
  installJson(app, roles.maxBodyBytes);
  installErrorHandling(app);
  installAuth(app, roles.verify);
  metricsRoutes(app, roles.metrics);
  healthRoutes(app);
  adminRoutes(app, roles.admin);
  namespaceRoutes(app, roles.namespaces);
  if (roles.ui !== undefined) uiRoutes(app, roles.ui);
  if (roles.deployments !== undefined) {
    deploymentRoutes(app, roles.deployments.service, roles.deployments.enabled);
  }
  if (roles.routing !== undefined) installRouting(app, roles.routing);
  workflowRoutes(app, {
    namespaces: roles.namespaces,
    ...roles.workflows,
    queues: roles.queues,
    transcripts: {
      read: (ref) => roles.agents.hub.transcript(ref),
      attempts: (runId) => roles.agents.hub.transcribed(runId),
    },
  });
  definitionVersionRoutes(app, { namespaces: roles.namespaces, ...roles.workflows });
  // Live streams end as the server begins to stop, so they never hold its close.
  const streams = new EventStreams(roles.logger);
  app.addHook("preClose", (done) => {
    streams.close();
    done();
  });
  const changes = roles.changes ?? new ChangeSignals();
  const streamRoles = {
    namespaces: roles.namespaces,
    runs: roles.workflows.runs,
    changes,
    streams,
  };
  historyStreamRoute(app, streamRoles);
  taskQueueRoutes(app, roles.namespaces, roles.queues);
  agentRoutes(app, { namespaces: roles.namespaces, runs: roles.workflows.runs, ...roles.agents });
  transcriptStreamRoute(app, { ...streamRoles, ...roles.agents });
  // Last: its tools call every route above, and its path must not be one of theirs.
  if (roles.mcp?.enabled === true) {
    installMcp(app, {
      settings: roles.mcp,
      verify: roles.verify,
      log: roles.logger,
      meter: toolMeter(roles.metrics),
      observeSessions: (open) => roles.metrics.observeMcpSessions(open),
      changes,
      defaultNamespace: roles.namespaces.settings.defaultNamespace,
    });
  }
  const agentHub = roles.agents.hub;
  app.server.on("upgrade", (request, socket, head) =>
    agentHub.handleUpgrade(request, socket, head),
  );
  return app;
}
