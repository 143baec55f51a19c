/**
 * `skein-store door FILE`: the browser gateway. It reads and decodes the door file (at most
 * 1048576 bytes) and its `SERVICE_` environment variables, reads the app credential from
 * `idp.secret_file` once, and only then listens on its loopback address, stopping cleanly
 * on SIGINT or SIGTERM. Every refusal reads "the door configuration is not valid: …" and
 * exits with status 2. The sign-in flow, the console assets and the store proxy are routes
 * added on this listener by the door's own modules.
 */

import { resolve } from "node:path";
import { type Command, parseOptions } from "../../common/cli.ts";
import { DecodeError, parseJson } from "../../common/decode/index.ts";
import { SkeinError } from "../../common/errors.ts";
import { createLogger, type Logger } from "../../common/log.ts";
import { doorFile } from "../config/door.ts";
import { decodeDoorEnv } from "../config/door-env.ts";
import { readConfigFile, readCredentialFile } from "../config/files.ts";
import { CONFIG_FILE_MAX_BYTES } from "../config/limits.ts";
import { DOOR_CONFIG_INVALID, DOOR_CONFIG_MESSAGE, rewrite } from "../config/refusals.ts";
import type { DoorConfig, DoorEnv } from "../config/types.ts";
import { startLoopbackHttp } from "../loopback-http.ts";
import { prefixed, reportRefusals } from "./refusal.ts";
import { stopSignal, stopWhen } from "./signals.ts";

export interface DoorStartup {
  readonly config: DoorConfig;
  readonly env: DoorEnv;
  /** The app credential read from `idp.secret_file`; never logged. */
  readonly secret: string;
}

/** Every check the door makes before it listens; throws a SkeinError. */
export async function loadDoor(
  file: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<DoorStartup> {
  try {
    const text = await readConfigFile(file, CONFIG_FILE_MAX_BYTES);
    let parsed: unknown;
    try {
      parsed = parseJson(text);
    } catch (error) {
      // A syntax error is a door configuration refusal like any other.
      throw error instanceof DecodeError
        ? rewrite(error, error.message, DOOR_CONFIG_INVALID)
        : error;
    }
    const config = doorFile.run(parsed, undefined);
    const doorEnv = decodeDoorEnv(env);
    const secret = await readCredentialFile("idp.secret_file", config.idp.secret_file);
    return { config, env: doorEnv, secret };
  } catch (error) {
    throw prefixed(error, DOOR_CONFIG_MESSAGE);
  }
}

export interface DoorDeps {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly logger?: () => Logger;
  readonly until?: () => Promise<unknown>;
}

export function doorCommand(deps: DoorDeps = {}): Command {
  return {
    name: "door",
    summary: "run the browser gateway from its door file",
    help: "FILE\n\n  FILE  the door file (JSON, at most 1048576 bytes)\n",
    run: (args, io) =>
      reportRefusals("door", io, async () => {
        const { positionals } = parseOptions(args, {}, { min: 1, max: 1 });
        const door = await loadDoor(resolve(positionals[0]!), deps.env ?? process.env);
        const log = (deps.logger ?? (() => createLogger({ name: "skein-store-door" })))();
        // Listen for the stop signal before the listener exists: a signal that arrives as
        // soon as the socket appears must still stop the service cleanly.
        const stop = deps.until ? stopWhen(deps.until) : stopSignal();
        let http: Awaited<ReturnType<typeof startLoopbackHttp>>;
        try {
          http = await startLoopbackHttp({
            listen: door.config.listen,
            maxConnections: door.config.max_connections,
            log,
            service: "door",
          });
        } catch (error) {
          stop.dispose();
          const reason = (error as NodeJS.ErrnoException).code ?? String(error);
          throw new SkeinError(
            DOOR_CONFIG_INVALID,
            `${DOOR_CONFIG_MESSAGE}: listen: cannot listen (${reason})`,
          );
        }
        await stop.stopped;
        await http.close();
        return 0;
      }),
  };
}
