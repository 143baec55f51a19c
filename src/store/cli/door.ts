/**
 * `skein-store door FILE`: the browser gateway. It reads and decodes the door file (at most
 * 1048576 bytes) and its `SERVICE_` environment variables, reads the app credential from
 * `idp.secret_file` once, fetches the issuer's discovery document (bounded by
 * SERVICE_IDP_CONNECT_TIMEOUT_MS / SERVICE_IDP_TIMEOUT_MS), and only then listens on its
 * loopback address, stopping cleanly on SIGINT or SIGTERM. A configuration refusal reads "the
 * door configuration is not valid: …"; an issuer that cannot be used reads "idp.issuer:
 * endpoint_refused|contract_refused: …"; both exit with status 2. The routes (sign-in, the
 * console API, the console's files) are in src/store/door/.
 */

import { resolve } from "node:path";
import { type Command, parseOptions } from "../../common/cli.ts";
import { DecodeError, parseJson } from "../../common/decode/index.ts";
import { SkeinError } from "../../common/errors.ts";
import { createLogger, type Logger } from "../../common/log.ts";
import { stopSignal, stopWhen } from "../../common/stop-signal.ts";
import { doorFile } from "../config/door.ts";
import { decodeDoorEnv } from "../config/door-env.ts";
import { readConfigFile, readCredentialFile } from "../config/files.ts";
import { CONFIG_FILE_MAX_BYTES } from "../config/limits.ts";
import type { DoorConfig, DoorEnv } from "../config/types.ts";
import { doorHandler } from "../door/app.ts";
import { ConsoleAssets } from "../door/assets.ts";
import { DOOR_BROWSER_IO_MS, DOOR_HEAD_MAX_BYTES } from "../door/bounds.ts";
import { DoorIssuer } from "../door/issuer.ts";
import { PendingSignIns, Sessions } from "../door/sessions.ts";
import { DoorStores } from "../door/stores.ts";
import { DOOR_CONFIG_INVALID, DOOR_CONFIG_MESSAGE, rewrite } from "../errors.ts";
import { startLoopbackHttp } from "../loopback-http.ts";
import { prefixed, reportRefusals } from "./refusal.ts";

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
        const issuer = await DoorIssuer.discover(door.config.idp, door.secret, door.env);
        const handler = doorHandler({
          origin: door.config.origin,
          issuer,
          stores: new DoorStores(door.config.stores, door.config.timeout_ms),
          pending: new PendingSignIns(door.env.SERVICE_PENDING_SIGNINS),
          sessions: new Sessions(door.env.SERVICE_SESSION_SECONDS),
          assets: await ConsoleAssets.load(door.config.files),
          log,
        });
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
            handler,
            limits: { headBytes: DOOR_HEAD_MAX_BYTES, ioMs: DOOR_BROWSER_IO_MS },
          });
        } catch (error) {
          stop.dispose();
          issuer.close();
          const reason = (error as NodeJS.ErrnoException).code ?? String(error);
          throw new SkeinError(
            DOOR_CONFIG_INVALID,
            `${DOOR_CONFIG_MESSAGE}: listen: cannot listen (${reason})`,
          );
        }
        await stop.stopped;
        await http.close();
        issuer.close();
        return 0;
      }),
  };
}
