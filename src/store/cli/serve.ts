/**
 * `skein-store serve FILE [--create]`: decode the service file, run the start-up checks,
 * create (with `--create`) or open the store, listen on its Unix socket and stop cleanly on
 * SIGINT or SIGTERM, removing the socket and releasing the store name. A refusal at any step
 * before listening is one stderr line and exit status 2, with nothing left on disk.
 */

import { resolve } from "node:path";
import { type Command, parseOptions } from "../../common/cli.ts";
import { decodeJson } from "../../common/decode/index.ts";
import { SkeinError } from "../../common/errors.ts";
import { createLogger, type Logger } from "../../common/log.ts";
import type { ListenAddress } from "../config/addresses.ts";
import { readConfigFile } from "../config/files.ts";
import { serviceFile } from "../config/service-file.ts";
import { EmbedService } from "../embed/service.ts";
import { openStore, type Store } from "../engine/index.ts";
import { connectIdp } from "../idp/discovery.ts";
import type { IdpGate } from "../idp/gate.ts";
import type { LoopbackHttp } from "../loopback-http.ts";
import { INVALID_METRICS_LISTEN, startMetricsListener } from "../metrics/listener.ts";
import { StoreMetrics } from "../metrics/registry.ts";
import { QueryService } from "../query/service.ts";
import { INVALID_SOCKET } from "../startup/errors.ts";
import { commitStartup, planStartup, type StoreStartup } from "../startup/plan.ts";
import { removeSocket } from "../startup/socket-path.ts";
import { type StoreServer, startStoreServer } from "../transport/server.ts";
import { servedVerbs, type VerbServices } from "../transport/verbs.ts";
import { reportRefusals } from "./refusal.ts";
import { stopSignal, stopWhen } from "./signals.ts";

export interface ServeDeps {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly logger?: () => Logger;
  /** Resolves when the server should stop; defaults to SIGINT or SIGTERM. */
  readonly until?: () => Promise<unknown>;
}

export function serveCommand(deps: ServeDeps = {}): Command {
  return {
    name: "serve",
    summary: "run a store from its service file (--create makes a new store)",
    help: "FILE [--create]\n\n  FILE      the service file (JSON)\n  --create  create a new store in data_dir (needs a create section)\n",
    run: (args, io) =>
      reportRefusals("serve", io, async () => {
        const { values, positionals } = parseOptions(
          args,
          { create: { type: "boolean" } },
          { min: 1, max: 1 },
        );
        const file = resolve(positionals[0]!);
        const config = decodeJson(serviceFile, await readConfigFile(file));
        const plan = await planStartup(config, {
          create: values.create === true,
          env: deps.env ?? process.env,
        });
        const log = (deps.logger ?? (() => createLogger({ name: "skein-store" })))();
        // The issuer is asked before anything is written: a refusal leaves nothing on disk.
        const idp = await startIdp(plan.startup, log);
        // Listen for the stop signal before the listener exists: a signal that arrives as
        // soon as the socket appears must still stop the service cleanly.
        const stop = deps.until ? stopWhen(deps.until) : stopSignal();
        let committed: Awaited<ReturnType<typeof commitStartup>>;
        try {
          committed = await commitStartup(plan);
        } catch (error) {
          stop.dispose();
          idp?.close();
          throw error;
        }
        let store: Store;
        let server: StoreServer;
        try {
          store = openStore(engineOptions(committed.startup));
        } catch (error) {
          stop.dispose();
          idp?.close();
          await committed.rollback();
          throw error;
        }
        // A failed probe does not stop the store: it is logged and answers every query.
        const queries = config.query === null ? null : await QueryService.start(config.query);
        if (queries?.failure) {
          log.error({ code: queries.failure.code }, `query worker: ${queries.failure.message}`);
        }
        const embed = await startEmbed(committed.startup, log);
        const metrics = meter(store, { queries, embed }, config.metrics_listen !== null);
        try {
          server = await startStoreServer(store, {
            ...serverOptions(committed.startup),
            idp,
            queries,
            embed,
            ...(metrics === undefined ? {} : { observe: metrics.observer }),
          });
        } catch (error) {
          stop.dispose();
          idp?.close();
          queries?.close();
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
        const { name, dataDir, socketPath } = committed.startup;
        let listener: LoopbackHttp | undefined;
        const shutdown = async () => {
          stop.dispose();
          await listener?.close();
          await server.close();
          idp?.close();
          queries?.close();
          await embed?.close();
          await store.close();
          await removeSocket(socketPath);
          await committed.lock.release();
        };
        if (metrics !== undefined && config.metrics_listen !== null) {
          const at = config.metrics_listen;
          try {
            listener = await metrics.listen(at, () => server.clients, log);
          } catch (error) {
            await shutdown();
            const reason = (error as NodeJS.ErrnoException).code ?? String(error);
            throw new SkeinError(
              INVALID_METRICS_LISTEN,
              `metrics_listen: cannot listen on ${at.host}:${at.port} (${reason})`,
            );
          }
        }
        if (plan.startup.created) log.info({ data_dir: dataDir }, "store created");
        log.info({ store: name, socket: socketPath, data_dir: dataDir }, "store listening");
        await stop.stopped;
        await shutdown();
        log.info({ store: name }, "store stopped");
        return 0;
      }),
  };
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
