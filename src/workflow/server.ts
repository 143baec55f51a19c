/**
 * One workflow server node: reads (or, on first run, writes) the configuration, prepares the
 * data directory, the signing key and the admin token, opens and migrates storage, creates
 * the default namespace, starts the engine and its gRPC worker endpoint (`grpc.listen`),
 * recovers every running run from history, then builds the HTTP app and listens. `close`
 * stops accepting requests and lets in-flight ones finish, then ends the worker streams,
 * lets the engine's last commit land and closes storage: the order graceful shutdown needs.
 * The start report says what was created and where everything is, for the CLI to print.
 */

import { mkdir } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import type { Logger } from "../common/log.ts";
import { attemptKey } from "../protocol/attempt.ts";
import { matcherAuthority, withAgentCancel } from "./agents/dispatch.ts";
import { AgentHub } from "./agents/hub.ts";
import { buildApp } from "./app.ts";
import { ensureAdminToken } from "./auth/admin-token.ts";
import { ensureSigningKey } from "./auth/keys.ts";
import { createVerifier, issueToken } from "./auth/tokens.ts";
import { cachingVerifier } from "./auth/verified-tokens.ts";
import { ClusterNode } from "./cluster/node.ts";
import { nodeToken, TaskRelay } from "./cluster/task-relay.ts";
import { httpUrl, type ListenAddress } from "./config/listen.ts";
import { ensureConfigFile, loadConfig, type ServerConfig } from "./config/load.ts";
import { DeploymentService } from "./deployments/service.ts";
import { Engine, type EngineOptions } from "./engine/engine.ts";
import type { ClaimBudget } from "./engine/outbox.ts";
import type { EngineStore } from "./engine/store.ts";
import { meteredActivities } from "./metrics/activities.ts";
import { meteredEngineStore } from "./metrics/engine-store.ts";
import { nodeProbes } from "./metrics/probes.ts";
import { WorkflowMetrics } from "./metrics/registry.ts";
import { runTracing } from "./metrics/tracing.ts";
import { NamespaceRegistry } from "./namespaces/registry.ts";
import { describeStorage, openStore } from "./persistence/open.ts";
import type { WorkflowStore } from "./persistence/store.ts";
import { startWorkerEndpoint, type WorkerEndpoint } from "./rpc/server.ts";
import { ChangeSignals, signallingEngineStore, signallingTranscripts } from "./runs/changes.ts";
import { DefinitionRegistry } from "./runs/definitions.ts";
import { RunEnds } from "./runs/ends.ts";
import { type RunEngine, RunService } from "./runs/service.ts";
import { closeWithin, type Stoppable, stopWorkflows } from "./shutdown.ts";
import { processLauncher } from "./supervisor/launcher.ts";
import { SUPERVISOR_DEFAULTS, Supervisor } from "./supervisor/supervisor.ts";
import { UiAssets } from "./ui/assets.ts";

export interface StartReport {
  readonly configFile: string;
  readonly configWritten: boolean;
  readonly dataDir: string;
  readonly signingKey: { readonly path: string; readonly created: boolean };
  readonly adminToken: { readonly path: string; readonly created: boolean };
  readonly storage: { readonly backend: string; readonly path: string; readonly schema: number };
  readonly defaultNamespace: string | undefined;
  readonly url: string;
  /** The gRPC worker endpoint (`host:port` as bound); undefined when workflows are off. */
  readonly workerEndpoint: string | undefined;
  /** Runs brought back from history at start-up. */
  readonly recoveredRuns: number;
}

export interface RunningServer {
  readonly config: ServerConfig;
  readonly report: StartReport;
  readonly url: string;
  close(): Promise<void>;
}

/** How long a graceful stop waits for requests in flight before closing their sockets. */
export const SHUTDOWN_GRACE_MS = 10_000;

/** Verified bearer tokens kept (each until it expires), so a client's token is checked once. */
export const VERIFIED_TOKENS_HELD = 1024;

/** Callers that may wait in `POST /workflows/describe` (`wait_ms`) at once; more answer at once. */
export const MAX_RUN_WAITERS = 10_000;

export interface StartOptions {
  readonly logger: Logger;
  /** Overrides `http.listen` (the `--listen` option). */
  readonly listen?: ListenAddress;
  /** Overrides `grpc.listen` (the `--grpc-listen` option). */
  readonly grpcListen?: ListenAddress;
  /**
   * Called when the engine cannot commit (storage failed): the engine has stopped, and the
   * process should exit so a restart recovers every run from history.
   */
  readonly onFatal?: (error: unknown) => void;
}

function hostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

export async function startServer(
  configPath: string,
  options: StartOptions,
): Promise<RunningServer> {
  const configWritten = await ensureConfigFile(configPath);
  const config = await loadConfig(configPath);
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const { key, created: keyCreated } = await ensureSigningKey(config.dataDir);
  const adminToken = await ensureAdminToken(config.dataDir, key.privateKey);

  const store: WorkflowStore = await openStore(config.storage);
  try {
    const { namespaces } = config.settings;
    const registry = new NamespaceRegistry(store.namespaces, {
      defaultNamespace: namespaces.default,
      autoCreate: namespaces.auto_create,
      maxInFlightActivities: namespaces.max_in_flight_activities,
      outboxEnabled: config.settings.outbox.enabled,
    });
    await registry.createDefault();
    // Counters move in wrappers around the roles' interfaces; levels are read at scrape time.
    const metrics = new WorkflowMetrics();
    const activities = meteredActivities(metrics);
    // Tracing wraps the same interfaces, only when on (off: not installed, nothing to pay).
    const tracing = config.settings.tracing.enabled ? runTracing() : undefined;
    // Durable changes (commits, transcript entries) wake the live streams of the API.
    const changes = new ChangeSignals();
    const verify = cachingVerifier(createVerifier(key.publicKey), { max: VERIFIED_TOKENS_HELD });
    // The agent transport exists only when configured on; off, every intervention is stale.
    const hub = new AgentHub({
      enabled: config.settings.agents.transport,
      verify,
      logger: options.logger,
      transcripts: signallingTranscripts(store.transcripts, changes),
    });

    // The engine, its worker endpoint and the run API exist where the backend keeps runs.
    let engine: (Stoppable & RunEngine) | undefined;
    let cluster: ClusterNode | undefined;
    let relay: TaskRelay | undefined;
    let endpoint: WorkerEndpoint | undefined;
    let workflows: { definitions: DefinitionRegistry; runs: RunService } | undefined;
    let recoveredRuns = 0;
    // Callers of describe with `wait_ms`, told when each run's end is durable.
    const ends = new RunEnds(MAX_RUN_WAITERS);
    // Workers are welcomed once HTTP listens, so each welcome can name the agent
    // transport's port (0 when the transport is off).
    let agentPort = 0;
    let listening: () => void = () => {};
    const httpListening = new Promise<void>((resolve) => {
      listening = resolve;
    });
    if (store.workflows !== undefined) {
      const definitions = new DefinitionRegistry(store.workflows.definitions);
      const engineOptions = (runs: EngineStore, budget?: ClaimBudget): EngineOptions => ({
        store: meteredEngineStore(
          signallingEngineStore(tracing?.store(runs) ?? runs, changes),
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
        logger: options.logger,
        onRunEnded: (runId, state) => {
          metrics.runsEnded.inc({ status: state.status });
          ends.ended(runId);
        },
        onFatal: (error) => {
          options.logger.fatal({ err: error }, "engine stopped: a commit failed");
          options.onFatal?.(error);
        },
      });
      const { cluster: clusterSettings } = config.settings;
      // PostgreSQL: a cluster node (of one or more), one engine per owned shard.
      cluster =
        store.cluster === undefined
          ? undefined
          : new ClusterNode({
              storage: store.cluster,
              settings: {
                nodeId: config.nodeId,
                shards: Number(clusterSettings.shards),
                leaseTtlMs: Number(clusterSettings.lease_ttl_ms),
              },
              logger: options.logger,
              quota: Number(namespaces.max_in_flight_activities),
              engine: (runs, onFatal, budget) =>
                new Engine({ ...engineOptions(runs, budget), onFatal }),
              onFatal: (error) => {
                options.logger.fatal({ err: error }, "stopping: this node left the cluster");
                options.onFatal?.(error);
              },
              // Another node changed a deployment record: apply the records here again.
              onDeployments: () => {
                if (config.settings.deployments.enabled) {
                  deployments.reconcile().catch((error: unknown) => {
                    options.logger.error({ err: error }, "cannot apply the deployment records");
                  });
                }
              },
            });
      const running = cluster?.engines ?? new Engine(engineOptions(store.workflows.runs));
      engine = running;
      const grpcListen = options.grpcListen ?? config.settings.grpc.listen;
      endpoint = await startWorkerEndpoint(hostPort(grpcListen.host, grpcListen.port), {
        verify,
        logger: options.logger,
        // A worker may serve a namespace only if it exists or auto_create makes it now.
        namespaceGate: async (namespace, subject) => {
          await httpListening;
          try {
            await registry.use(namespace, subject);
            return true;
          } catch (error) {
            if ((error as { code?: string }).code === "namespace_not_found") return false;
            throw error;
          }
        },
        events: activities.events(tracing?.events(running.matcherEvents) ?? running.matcherEvents),
        agentPort: () => agentPort,
      });
      const agentAware = withAgentCancel(endpoint.matcher, hub);
      const local = activities.dispatcher(tracing?.dispatcher(agentAware) ?? agentAware);
      metrics.observe(nodeProbes(running, endpoint.matcher));
      if (cluster === undefined) running.attach(local);
      else {
        // Cluster: an attempt whose queue has no worker here goes to a node that has one.
        const node = cluster;
        const matcher = endpoint.matcher;
        relay = new TaskRelay({
          nodeId: () => node.manager?.self.nodeId,
          peers: () => node.manager?.peers() ?? [],
          token: nodeToken(
            (subject, ttlSeconds) =>
              issueToken(key.privateKey, { subject, namespaces: "*", worker: true, ttlSeconds }),
            config.nodeId,
          ),
          local,
          withdraw: (ref) =>
            !matcher.liveAttempts(ref.run_id).some((a) => attemptKey(a.ref) === attemptKey(ref)) &&
            matcher.cancel(ref, "relayed to another node") !== "signalled",
          serves: (namespace, queue) =>
            matcher.workers().some((w) => w.namespace === namespace && w.taskQueue === queue),
          events: () => node.engines.matcherEvents,
          logger: options.logger,
        });
        node.engines.relayTo(relay.foreign());
        running.attach(relay.dispatcher());
      }
      hub.authorize(
        matcherAuthority(endpoint.matcher, (runId) => running.state(runId)?.started?.workflow_id),
      );
      try {
        // Every run is back in memory (its attempts offered again) before HTTP serves. A
        // cluster node recovers each shard as it is granted, once it has joined (below).
        if (cluster === undefined) recoveredRuns = await (running as Engine).recover();
      } catch (error) {
        await stopWorkflows(running, endpoint);
        throw error;
      }
      workflows = { definitions, runs: new RunService(running, store.workflows.runs, ends) };
    }

    // The local supervisor: with deployments off it is never asked to run anything.
    const supervisor = new Supervisor({
      launcher: processLauncher,
      logger: options.logger,
      ...SUPERVISOR_DEFAULTS,
    });
    const deployments = new DeploymentService({
      store: store.deployments,
      supervisor,
      nodeId: config.nodeId,
      dataDir: config.dataDir,
      logger: options.logger,
    });
    const deploymentsEnabled = config.settings.deployments.enabled;
    if (deploymentsEnabled) await deployments.startAll();

    const matcher = endpoint?.matcher;
    const app = buildApp({
      logger: options.logger,
      verify,
      metrics,
      admin: { backup: store.backup?.bind(store) },
      namespaces: registry,
      changes,
      maxBodyBytes: config.settings.http.max_body_bytes,
      listener: {
        maxConnections: config.settings.http.max_connections,
        headersTimeoutMs: config.settings.http.headers_timeout_ms,
      },
      deployments: { service: deployments, enabled: deploymentsEnabled },
      ui: await UiAssets.load(),
      ...(workflows === undefined ? {} : { workflows }),
      ...(matcher === undefined
        ? {}
        : {
            agents: { hub, grpcAttempts: (runId: string) => matcher.liveAttempts(runId) },
            queues: matcher,
          }),
      ...(cluster === undefined || store.cluster === undefined
        ? {}
        : {
            routing: {
              namespaces: registry,
              storage: store.cluster,
              total: cluster.engines.total,
              manager: () => cluster?.manager,
              ...(relay === undefined ? {} : { relay }),
              ceilingShare: () => cluster?.budget.ceiling ?? 0,
              quota: Number(namespaces.max_in_flight_activities),
            },
          }),
    });
    const listen = options.listen ?? config.settings.http.listen;
    try {
      await app.listen({ host: listen.host, port: listen.port });
    } catch (error) {
      hub.close();
      await app.close();
      if (engine !== undefined && endpoint !== undefined) await stopWorkflows(engine, endpoint);
      await supervisor.close();
      throw error;
    }
    const address = app.server.address() as AddressInfo;
    const url = httpUrl(listen.host, address.port);
    if (cluster !== undefined && endpoint !== undefined && engine !== undefined) {
      try {
        await cluster.join(config.settings.cluster.advertise_url ?? url);
        recoveredRuns = cluster.engines.running;
      } catch (error) {
        hub.close();
        await app.close();
        await stopWorkflows(engine, endpoint, cluster);
        await supervisor.close();
        throw error;
      }
    }
    if (config.settings.agents.transport) agentPort = address.port;
    listening();
    options.logger.info({ url, node_id: config.nodeId }, "workflow server listening");

    const report: StartReport = {
      configFile: config.file,
      configWritten,
      dataDir: config.dataDir,
      signingKey: { path: key.path, created: keyCreated },
      adminToken,
      storage: {
        backend: store.backend,
        path: describeStorage(config.storage),
        schema: store.schemaVersion,
      },
      defaultNamespace: namespaces.default,
      url,
      workerEndpoint:
        endpoint === undefined
          ? undefined
          : hostPort((options.grpcListen ?? config.settings.grpc.listen).host, endpoint.port),
      recoveredRuns,
    };
    let closing: Promise<void> | undefined;
    return {
      config,
      report,
      url,
      close: () => {
        // The API first (no request can start a run or a worker meanwhile), then the engine
        // and its worker endpoint (the last commit lands), then the supervised workers, then
        // storage: the server never exits leaving a child behind or a result unrecorded.
        hub.close();
        // Long polls answer now, with what is durable, rather than hold the close.
        ends.close();
        closing ??= closeWithin(app, SHUTDOWN_GRACE_MS, options.logger)
          .then(() => hub.flushed())
          .then(() =>
            engine !== undefined && endpoint !== undefined
              ? stopWorkflows(engine, endpoint, cluster)
              : undefined,
          )
          .then(() => supervisor.close())
          .then(() => store.close());
        return closing;
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
