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
import { readConfigFile } from "../config/files.ts";
import { serviceFile } from "../config/service-file.ts";
import { startStoreServer } from "../server.ts";
import { INVALID_SOCKET } from "../startup/errors.ts";
import { commitStartup, planStartup } from "../startup/plan.ts";
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
        // Listen for the stop signal before the listener exists: a signal that arrives as
        // soon as the socket appears must still stop the service cleanly.
        const stop = deps.until ? stopWhen(deps.until) : stopSignal();
        let committed: Awaited<ReturnType<typeof commitStartup>>;
        try {
          committed = await commitStartup(plan);
        } catch (error) {
          stop.dispose();
          throw error;
        }
        let server: Awaited<ReturnType<typeof startStoreServer>>;
        try {
          server = await startStoreServer(committed.startup, log);
        } catch (error) {
          stop.dispose();
          await committed.rollback();
          const reason = (error as NodeJS.ErrnoException).code ?? String(error);
          throw new SkeinError(
            INVALID_SOCKET,
            `socket: cannot listen on ${plan.startup.socketPath} (${reason})`,
          );
        }
        if (plan.startup.created) log.info({ data_dir: plan.startup.dataDir }, "store created");
        await stop.stopped;
        await server.close();
        await committed.lock.release();
        return 0;
      }),
  };
}
