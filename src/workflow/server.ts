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
import type { FastifyInstance } from "fastify";
import type { Logger } from "../common/log.ts";
import { AgentHub } from "./agents/hub.ts";
import { buildApp } from "./app.ts";
import { ensureAdminToken } from "./auth/admin-token.ts";
import { ensureSigningKey } from "./auth/keys.ts";
import { createVerifier } from "./auth/tokens.ts";
import { cachingVerifier } from "./auth/verified-tokens.ts";
import { httpUrl, type ListenAddress } from "./config/listen.ts";
import { ensureConfigFile, loadConfig, type ServerConfig } from "./config/load.ts";
import { DeploymentService } from "./deployments/service.ts";
import { hostPort, startEngineSide, stopWorkflows } from "./engine-side.ts";
import { meteredActivities } from "./metrics/activities.ts";
import { WorkflowMetrics } from "./metrics/registry.ts";
import { runTracing } from "./metrics/tracing.ts";
import { NamespaceRegistry } from "./namespaces/registry.ts";
import { describeStorage, openStore } from "./persistence/open.ts";
import type { WorkflowStore } from "./persistence/store.ts";
import { ChangeSignals, signallingTranscripts } from "./runs/changes.ts";
import { RunEnds } from "./runs/ends.ts";
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
  /** The gRPC worker endpoint (`host:port` as bound). */
  readonly workerEndpoint: string;
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

/**
 * Stops accepting, waits for in-flight requests up to `graceMs`, then closes whatever is
 * still open, so a stuck client can never hold a stopping node (storage closes after).
 * Connections that go idle meanwhile are closed as soon as they do.
 */
async function closeWithin(app: FastifyInstance, graceMs: number, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), graceMs);
  });
  const closed = app.close();
  // A keep-alive connection whose request finishes during the stop turns idle only then;
  // close such connections as they appear instead of waiting for their keep-alive timeout.
  const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
  if ((await Promise.race([closed, late])) === "late") {
    logger.warn(
      { grace_ms: graceMs },
      "requests still in flight after the grace period; closing them",
    );
    app.server.closeAllConnections();
    await closed;
  }
  clearTimeout(timer);
  clearInterval(sweep);
}

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
    const verify = cachingVerifier(createVerifier(key.publicKey), { max: VERIFIED_TOKENS_HELD });
    // The agent transport exists only when configured on; off, every intervention is stale.
    // Durable changes (commits, transcript entries) wake the live streams of the API.
    const changes = new ChangeSignals();
    const hub = new AgentHub({
      enabled: config.settings.agents.transport,
      verify,
      logger: options.logger,
      transcripts: signallingTranscripts(store.transcripts, changes),
    });

    // Workers are welcomed once HTTP listens, so each welcome can name the agent
    // transport's port (0 when the transport is off).
    let agentPort = 0;
    let listening: () => void = () => {};
    const httpListening = new Promise<void>((resolve) => {
      listening = resolve;
    });
    // Callers of describe with `wait_ms`, told when each run's end is durable.
    const ends = new RunEnds(MAX_RUN_WAITERS);
    const side = await startEngineSide({
      config,
      store,
      registry,
      metrics,
      activities,
      tracing,
      verify,
      hub,
      ends,
      changes,
      privateKey: key.privateKey,
      logger: options.logger,
      grpcListen: options.grpcListen ?? config.settings.grpc.listen,
      httpListening,
      agentPort: () => agentPort,
      ...(options.onFatal === undefined ? {} : { onFatal: options.onFatal }),
      onDeployments: () => {
        if (config.settings.deployments.enabled) {
          deployments.reconcile().catch((error: unknown) => {
            options.logger.error({ err: error }, "cannot apply the deployment records");
          });
        }
      },
    });
    const { engine, endpoint, cluster, relay } = side;
    let recoveredRuns = side.recoveredRuns;

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

    const matcher = endpoint.matcher;
    const app = buildApp({
      changes,
      logger: options.logger,
      verify,
      metrics,
      admin: { backup: store.backup?.bind(store) },
      namespaces: registry,
      maxBodyBytes: config.settings.http.max_body_bytes,
      listener: {
        maxConnections: config.settings.http.max_connections,
        headersTimeoutMs: config.settings.http.headers_timeout_ms,
      },
      deployments: { service: deployments, enabled: deploymentsEnabled },
      ui: await UiAssets.load(),
      workflows: { definitions: side.definitions, runs: side.runs },
      agents: { hub, grpcAttempts: (runId: string) => matcher.liveAttempts(runId) },
      queues: matcher,
      mcp: config.settings.mcp,
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
              claimed: () => cluster?.budget.claims() ?? new Map(),
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
      await stopWorkflows(engine, endpoint);
      await supervisor.close();
      throw error;
    }
    const address = app.server.address() as AddressInfo;
    const url = httpUrl(listen.host, address.port);
    if (cluster !== undefined) {
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
      workerEndpoint: hostPort(
        (options.grpcListen ?? config.settings.grpc.listen).host,
        endpoint.port,
      ),
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
          .then(() => stopWorkflows(engine, endpoint, cluster))
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
