/**
 * `skein-store serve FILE [--create]`: decode the service file, run the start-up checks,
 * create (with `--create`) or open the store, listen on its Unix socket (src/store/service.ts)
 * and stop cleanly on SIGINT or SIGTERM, removing the socket and releasing the store name. A
 * refusal at any step before listening is one stderr line and exit status 2, with nothing
 * left on disk.
 */

import { resolve } from "node:path";
import { type Command, parseOptions } from "../../common/cli.ts";
import { decodeJson } from "../../common/decode/index.ts";
import { createLogger, type Logger } from "../../common/log.ts";
import { stopSignal, stopWhen } from "../../common/stop-signal.ts";
import { readConfigFile } from "../config/files.ts";
import { serviceFile } from "../config/service-file.ts";
import type { RunningStore } from "../service.ts";
import { reportRefusals } from "./refusal.ts";

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
        // Loaded here, not at the top: every other `skein-store` command (each a process of
        // its own) then starts without the service's modules (LMDB, MCP, metrics).
        const { planStoreService, startStoreService } = await import("../service.ts");
        const plan = await planStoreService(config, {
          create: values.create === true,
          env: deps.env ?? process.env,
        });
        const log = (deps.logger ?? (() => createLogger({ name: "skein-store" })))();
        // Listen for the stop signal before the listener exists: a signal that arrives as
        // soon as the socket appears must still stop the service cleanly.
        const stop = deps.until ? stopWhen(deps.until) : stopSignal();
        let running: RunningStore;
        try {
          running = await startStoreService(plan, log, deps.env ?? process.env);
        } catch (error) {
          stop.dispose();
          throw error;
        }
        const { name, dataDir, socketPath } = running.startup;
        if (plan.startup.created) log.info({ data_dir: dataDir }, "store created");
        log.info({ store: name, socket: socketPath, data_dir: dataDir }, "store listening");
        await stop.stopped;
        await running.stop();
        log.info({ store: name }, "store stopped");
        return 0;
      }),
  };
}
