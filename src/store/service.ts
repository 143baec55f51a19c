/**
 * One store node, in the shape of the workflow server (src/workflow/server.ts): plan (the
 * start-up checks that need the file system, writing nothing), open (the identity client,
 * asked before anything is written; the name lock and store files; the query and embedding
 * workers), listen (the Unix socket), stop (everything in reverse order, the socket removed
 * and the name released). `skein-store serve` is this plus a service file and a stop signal.
 * A refusal before listening undoes what was done and leaves nothing on disk.
 */

import { SkeinError } from "../common/errors.ts";
import type { Logger } from "../common/log.ts";
import type { ListenAddress } from "./config/addresses.ts";
import type { StoreServiceConfig } from "./config/types.ts";
import { EmbedService } from "./embed/service.ts";
import { openStore, type Store } from "./engine/index.ts";
import { INVALID_METRICS_LISTEN, INVALID_SOCKET } from "./errors.ts";
import { connectIdp } from "./idp/discovery.ts";
import type { IdpGate } from "./idp/gate.ts";
import type { LoopbackHttp } from "./loopback-http.ts";
import { startMetricsListener } from "./metrics/listener.ts";
import { StoreMetrics } from "./metrics/registry.ts";
import { QueryService } from "./query/service.ts";
import { SearchService } from "./search/service.ts";
import { searchTrace } from "./search/trace.ts";
import {
  commitStartup,
  planStartup,
  type StartupOptions,
  type StartupPlan,
  type StoreStartup,
} from "./startup/plan.ts";
import { removeSocket } from "./startup/socket-path.ts";
import { type StoreServer, startStoreServer } from "./transport/server.ts";
import { servedVerbs, type VerbServices } from "./transport/verbs.ts";

export interface RunningStore {
  readonly startup: StoreStartup;
  /** Closes connections, workers and the store, removes the socket, releases the name. */
  stop(): Promise<void>;
}

/** The start-up checks of a decoded service file; nothing is written. */
export function planStoreService(
  config: StoreServiceConfig,
  options: StartupOptions,
): Promise<StartupPlan> {
  return planStartup(config, options);
}

/** Opens the planned store and listens on its socket; undoes everything on a refusal. */
export async function startStoreService(
  plan: StartupPlan,
  log: Logger,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<RunningStore> {
  // The issuer is asked before anything is written: a refusal leaves nothing on disk.
  const idp = await startIdp(plan.startup, log);
  let committed: Awaited<ReturnType<typeof commitStartup>>;
  try {
    committed = await commitStartup(plan);
  } catch (error) {
    idp?.close();
    throw error;
  }
  let store: Store;
  try {
    store = openStore(engineOptions(committed.startup));
  } catch (error) {
    idp?.close();
    await committed.rollback();
    throw error;
  }
  const { config } = committed.startup;
  // A failed probe does not stop the store: it is logged and answers every query.
  const queries = config.query === null ? null : await QueryService.start(config.query);
  if (queries?.failure) {
    log.error({ code: queries.failure.code }, `query worker: ${queries.failure.message}`);
  }
  const embed = await startEmbed(committed.startup, log);
  const metrics = meter(store, { queries, embed }, config.metrics_listen !== null);
  let search: SearchService | null = null;
  let server: StoreServer;
  try {
    search = startSearch(store, embed, committed.startup, env, log);
    server = await startStoreServer(store, {
      ...serverOptions(committed.startup),
      idp,
      queries,
      embed,
      search,
      ...(metrics === undefined ? {} : { observe: metrics.observer }),
    });
  } catch (error) {
    idp?.close();
    queries?.close();
    await search?.close();
    await embed?.close();
    await store.close();
    await committed.rollback();
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new SkeinError(
      INVALID_SOCKET,
      `socket: cannot listen on ${plan.startup.socketPath} (${reason})`,
    );
  }
  embed?.startWalk(store);
  search?.start();
  let listener: LoopbackHttp | undefined;
  const stop = async () => {
    await listener?.close();
    await server.close();
    idp?.close();
    queries?.close();
    await embed?.close();
    await search?.close();
    await store.close();
    await removeSocket(committed.startup.socketPath);
    await committed.lock.release();
  };
  // The metrics listener is bound last, once the socket listens; a failure there undoes all.
  if (metrics !== undefined && config.metrics_listen !== null) {
    const at = config.metrics_listen;
    try {
      listener = await metrics.listen(at, () => server.clients, log);
    } catch (error) {
      await stop();
      const reason = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new SkeinError(
        INVALID_METRICS_LISTEN,
        `metrics_listen: cannot listen on ${at.host}:${at.port} (${reason})`,
      );
    }
  }
  return { startup: committed.startup, stop };
}

/**
 * The store's metrics, when `metrics_listen` is set: the commit writer is wrapped and verbs
 * are observed only then, so a store without a metrics listener pays nothing for them.
 */
function meter(store: Store, services: VerbServices, wanted: boolean) {
  if (!wanted) return undefined;
  const metrics = new StoreMetrics(servedVerbs(services));
  const pipeline = store.ctx.pipeline;
  pipeline.writer = metrics.meteredWriter(pipeline.writer);
  return {
    observer: (verb: string, outcome: string, seconds: number) =>
      metrics.verbs.observe({ verb: metrics.verbLabel(verb), outcome }, seconds),
    listen(address: ListenAddress, clients: () => number, log: Logger) {
      metrics.observe({ store, clients });
      return startMetricsListener(address, metrics, log);
    },
  };
}

/** The identity client, when the service file has `idp`: null keeps the private socket. */
async function startIdp(startup: StoreStartup, log: Logger): Promise<IdpGate | null> {
  const { idp } = startup.config;
  if (idp === null) return null;
  const gate = await connectIdp(idp, {
    credential: startup.placementCredential,
    warn: (message) => log.warn({ issuer: idp.issuer }, message),
  });
  log.info({ issuer: idp.issuer, database: idp.database }, "identity provider decides every act");
  return gate;
}

/**
 * The embedding service, when the service file has the group. A failed start does not stop
 * the store: it is logged and answers every embedding verb.
 */
async function startEmbed(startup: StoreStartup, log: Logger): Promise<EmbedService | null> {
  const settings = startup.config.embed;
  if (settings === null) return null;
  const embed = await EmbedService.start(settings, log);
  if (embed.failure !== undefined) {
    log.error({ code: embed.failure.code }, `embedding: ${embed.failure.message}`);
  } else {
    log.info(
      { model: settings.embed_model_sha256, workers: embed.pids },
      "embedding workers ready",
    );
  }
  return embed;
}

/**
 * The search service, with the embedding group: its indexes live under the data directory.
 * `SKEIN_SEARCH_INDEX_MIN` (records) overrides the size below which heads are searched
 * exactly without an HNSW index (tests and benchmarks lower it).
 */
function startSearch(
  store: Store,
  embed: EmbedService | null,
  { dataDir }: StoreStartup,
  env: Readonly<Record<string, string | undefined>>,
  log: Logger,
): SearchService | null {
  if (embed === null) return null;
  const min = env.SKEIN_SEARCH_INDEX_MIN;
  const indexMin = min !== undefined && /^\d+$/.test(min) ? Number(min) : undefined;
  return new SearchService(store, embed, { dataDir, indexMin, trace: searchTrace(env) }, log);
}

/** The engine's settings from the decoded service file (the spec's names in comments). */
function engineOptions({ config, dataDir }: StoreStartup) {
  const { keep } = config.retention;
  return {
    dataDir,
    branchCacheBytesPerShard: config.branch_cache_bytes_per_shard,
    maxPage: config.max_page,
    keptVersions: config.kept_versions,
    retention: {
      releaseMaxRows: config.retention.release_max_rows,
      releaseBatch: config.retention.release_batch,
      keep: keep === null ? undefined : { versions: keep.versions, days: keep.days },
    },
    appendPruneKeepCeiling: config.append_prune_keep_ceiling,
    appendPruneRemovalCap: config.append_prune_removal_cap,
    changesScanRecords: config.changes_scan_records,
    changesNodeBudget: config.changes_node_budget,
    changesMaxPage: config.changes_max_page,
  };
}

function serverOptions({ config, socketPath }: StoreStartup) {
  return {
    socketPath,
    maxFrame: config.max_frame,
    maxClients: config.max_clients,
    timeoutMs: config.timeout_ms,
  };
}
