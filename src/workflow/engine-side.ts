/**
 * The half of a node that runs workflows: the definition registry, the engine (one engine, or
 * on PostgreSQL a cluster node with one engine per owned shard), the gRPC worker endpoint and
 * its matcher, the dispatch chain between them (agent cancel, metrics, tracing and, in a
 * cluster, the task relay), recovery from history and the run service the HTTP API calls.
 * server.ts builds it between storage and the HTTP app and stops it with `stopWorkflows`, in
 * the order that loses nothing durable. It lives apart from server.ts because it is the one
 * part of a node whose wiring differs between a single node and a cluster node.
 */

import type { KeyObject } from "node:crypto";
import type { Logger } from "../common/log.ts";
import { attemptKey } from "../protocol/attempt.ts";
import { matcherAuthority, withAgentCancel } from "./agents/dispatch.ts";
import type { AgentHub } from "./agents/hub.ts";
import { nodeCredential } from "./auth/node-credential.ts";
import type { TokenVerifier } from "./auth/tokens.ts";
import { ClusterNode, type ClusterNodeOptions } from "./cluster/node.ts";
import { TaskRelay } from "./cluster/task-relay.ts";
import type { ListenAddress } from "./config/listen.ts";
import type { ServerConfig } from "./config/load.ts";
import type { Dispatcher } from "./engine/dispatcher.ts";
import { Engine, type EngineOptions } from "./engine/engine.ts";
import type { ClaimBudget } from "./engine/outbox.ts";
import type { EngineStore } from "./engine/store.ts";
import type { MeteredActivities } from "./metrics/activities.ts";
import { meteredEngineStore } from "./metrics/engine-store.ts";
import { nodeProbes } from "./metrics/probes.ts";
import type { WorkflowMetrics } from "./metrics/registry.ts";
import type { RunTracing } from "./metrics/tracing.ts";
import type { NamespaceRegistry } from "./namespaces/registry.ts";
import type { WorkflowStore } from "./persistence/store.ts";
import { startWorkerEndpoint, type WorkerEndpoint } from "./rpc/server.ts";
import {
  type ChangeSignals,
  signallingDefinitions,
  signallingEngineStore,
} from "./runs/changes.ts";
import { DefinitionRegistry } from "./runs/definitions.ts";
import type { RunEnds } from "./runs/ends.ts";
import { type RunEngine, RunService } from "./runs/service.ts";

/** What stopping needs of the engine side: a single engine, or a cluster node's shards. */
export interface Stoppable {
  idle(): Promise<void>;
  close(): void;
}

/** What the engine side is built from: the node's storage and the roles built before it. */
export interface EngineSideRoles {
  readonly config: ServerConfig;
  readonly store: WorkflowStore;
  readonly registry: NamespaceRegistry;
  readonly metrics: WorkflowMetrics;
  readonly activities: MeteredActivities;
  /** Installed only when tracing is on. */
  readonly tracing: RunTracing | undefined;
  readonly verify: TokenVerifier;
  readonly hub: AgentHub;
  /** Callers of describe with `wait_ms`, told when each run's end is durable. */
  readonly ends: RunEnds;
  /** Told of every commit and registration, so live streams and MCP sessions wake. */
  readonly changes: ChangeSignals;
  /** Signs the bearer a cluster node presents to its peers. */
  readonly privateKey: KeyObject;
  readonly logger: Logger;
  readonly grpcListen: ListenAddress;
  /** Settles once HTTP listens: worker namespaces are admitted only then. */
  readonly httpListening: Promise<void>;
  /** The agent transport's port for each welcome (0 when the transport is off). */
  readonly agentPort: () => number;
  /** The engine cannot commit, or this node left its cluster: the process should exit. */
  readonly onFatal?: (error: unknown) => void;
  /** Another cluster node changed a deployment record. */
  readonly onDeployments: () => void;
}

export interface EngineSide {
  readonly engine: Stoppable & RunEngine;
  readonly endpoint: WorkerEndpoint;
  /** Present on a cluster node (PostgreSQL); it joins once HTTP listens. */
  readonly cluster: ClusterNode | undefined;
  readonly relay: TaskRelay | undefined;
  readonly definitions: DefinitionRegistry;
  readonly runs: RunService;
  /** Runs brought back from history (a cluster node recovers its shards after joining). */
  readonly recoveredRuns: number;
}

export function hostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Stops the engine side in the order that loses nothing durable (see server.ts `close`). */
export async function stopWorkflows(
  engine: Stoppable,
  endpoint: WorkerEndpoint,
  cluster?: ClusterNode,
): Promise<void> {
  // Workers go first, so no new result arrives; results not yet committed stay with their
  // workers, which send them again to the restarted server. A cluster node then hands its
  // shards over (each drained, released) and leaves.
  await endpoint.close();
  await cluster?.close();
  await engine.idle();
  engine.close();
}

export async function startEngineSide(roles: EngineSideRoles): Promise<EngineSide> {
  const { config, store, metrics, tracing, logger } = roles;
  const { namespaces } = config.settings;
  const definitions = new DefinitionRegistry(
    signallingDefinitions(store.workflows.definitions, roles.changes),
  );
  const engineOptions = (runs: EngineStore, budget?: ClaimBudget): EngineOptions => ({
    store: meteredEngineStore(
      signallingEngineStore(tracing?.store(runs) ?? runs, roles.changes),
      metrics,
    ),
    definitions: (namespace, version) => definitions.byVersion(namespace, version),
    // A child step names a workflow (and optionally a version) of the parent's namespace.
    childDefinition: (namespace, workflow, version) =>
      version === undefined
        ? definitions.latest(namespace, workflow)
        : definitions.byVersion(namespace, version),
    // Members of parallel and collect go through the outbox; its ceiling is in force
    // only while outbox.enabled is true (the spec's rule).
    outbox: {
      enabled: config.settings.outbox.enabled,
      maxInFlight: Number(namespaces.max_in_flight_activities),
      // Cluster: the shards of a node share its ceiling share (cluster/claim-budget.ts).
      ...(budget === undefined ? {} : { budget }),
    },
    logger,
    onRunEnded: (runId, state) => {
      metrics.runsEnded.inc({ status: state.status });
      roles.ends.ended(runId, state);
    },
    onFatal: (error) => {
      logger.fatal({ err: error }, "engine stopped: a commit failed");
      roles.onFatal?.(error);
    },
  });
  const cluster = clusterNode(
    roles,
    (runs, onFatal, budget) => new Engine({ ...engineOptions(runs, budget), onFatal }),
  );
  const running = cluster?.engines ?? new Engine(engineOptions(store.workflows.runs));
  const endpoint = await startWorkerEndpoint(
    hostPort(roles.grpcListen.host, roles.grpcListen.port),
    {
      verify: roles.verify,
      logger,
      // A worker may serve a namespace only if it exists or auto_create makes it now.
      namespaceGate: async (namespace, subject) => {
        await roles.httpListening;
        try {
          await roles.registry.use(namespace, subject);
          return true;
        } catch (error) {
          if ((error as { code?: string }).code === "namespace_not_found") return false;
          throw error;
        }
      },
      events: roles.activities.events(
        tracing?.events(running.matcherEvents) ?? running.matcherEvents,
      ),
      agentPort: roles.agentPort,
    },
  );
  const agentAware = withAgentCancel(endpoint.matcher, roles.hub);
  const local = tracing?.dispatcher(agentAware) ?? agentAware;
  metrics.observe(nodeProbes(running, endpoint.matcher));
  let relay: TaskRelay | undefined;
  if (cluster === undefined) running.attach(local);
  else {
    relay = taskRelay(roles, cluster, endpoint, local);
    cluster.engines.relayTo(relay.foreign());
    running.attach(relay.dispatcher());
  }
  roles.hub.authorize(
    matcherAuthority(
      endpoint.matcher,
      (ref) => running.state(ref.run_id)?.started?.workflow_id ?? relay?.workflowOfTaken(ref),
    ),
  );
  let recoveredRuns = 0;
  try {
    // Every run is back in memory (its attempts offered again) before HTTP serves. A
    // cluster node recovers each shard as it is granted, once it has joined (server.ts).
    if (cluster === undefined) recoveredRuns = await (running as Engine).recover();
  } catch (error) {
    await stopWorkflows(running, endpoint);
    throw error;
  }
  const runs = new RunService(running, store.workflows.runs, roles.ends);
  return { engine: running, endpoint, cluster, relay, definitions, runs, recoveredRuns };
}

/** PostgreSQL: a cluster node (of one or more), one engine per owned shard; else undefined. */
function clusterNode(
  roles: EngineSideRoles,
  engine: ClusterNodeOptions["engine"],
): ClusterNode | undefined {
  const { config, store, logger } = roles;
  if (store.cluster === undefined) return undefined;
  const { cluster: clusterSettings, namespaces } = config.settings;
  return new ClusterNode({
    storage: store.cluster,
    settings: {
      nodeId: config.nodeId,
      shards: Number(clusterSettings.shards),
      leaseTtlMs: Number(clusterSettings.lease_ttl_ms),
    },
    logger,
    quota: Number(namespaces.max_in_flight_activities),
    engine,
    onFatal: (error) => {
      logger.fatal({ err: error }, "stopping: this node left the cluster");
      roles.onFatal?.(error);
    },
    // Another node changed a deployment record: apply the records here again.
    onDeployments: roles.onDeployments,
  });
}

/** Cluster: an attempt whose queue has no worker here goes to a node that has one. */
function taskRelay(
  roles: EngineSideRoles,
  node: ClusterNode,
  endpoint: WorkerEndpoint,
  local: Dispatcher,
): TaskRelay {
  const matcher = endpoint.matcher;
  return new TaskRelay({
    nodeId: () => node.manager?.self.nodeId,
    peers: () => node.manager?.peers() ?? [],
    token: nodeCredential(roles.privateKey, roles.config.nodeId),
    local,
    withdraw: (ref) =>
      !matcher.liveAttempts(ref.run_id).some((a) => attemptKey(a.ref) === attemptKey(ref)) &&
      matcher.cancel(ref, "relayed to another node") !== "signalled",
    serves: (namespace, queue) =>
      matcher.workers().some((w) => w.namespace === namespace && w.taskQueue === queue),
    events: () => node.engines.matcherEvents,
    logger: roles.logger,
  });
}
