/**
 * How a client command finds and reaches its store. The socket comes from `--socket PATH`,
 * else `--store NAME` (resolved as `serve` resolves a store whose service file sets no
 * socket: `<runtime dir>/<NAME>.sock`, the runtime directory from XDG_RUNTIME_DIR or the
 * per-user temporary directory), else the environment variable SKEIN_STORE_SOCKET. A store
 * with `idp` takes the caller's pass from `--pass-file FILE` (one line) or else
 * SKEIN_STORE_PASS; it is never printed.
 */

import { resolve } from "node:path";
import { type Io, UsageError } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { StoreClient } from "../client/client.ts";
import { readCredentialFile } from "../config/files.ts";
import { storeNameProblem } from "../config/store-name.ts";
import { resolveRuntimeDir } from "../startup/runtime-dir.ts";
import { socketPathFor } from "../startup/socket-path.ts";

export const connectionOptions = {
  socket: { type: "string" },
  store: { type: "string" },
  "timeout-ms": { type: "string" },
  "pass-file": { type: "string" },
} as const;

/** The environment variable a pass is taken from when no `--pass-file` is given. */
export const PASS_ENV = "SKEIN_STORE_PASS";
/** The environment variable naming the socket when neither --socket nor --store is given. */
export const SOCKET_ENV = "SKEIN_STORE_SOCKET";

export interface ConnectionValues {
  readonly socket?: string | undefined;
  readonly store?: string | undefined;
  readonly "timeout-ms"?: string | undefined;
  readonly "pass-file"?: string | undefined;
}

/** The socket path the options (or the environment) name. */
export async function socketOf(
  values: ConnectionValues,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<string> {
  if (values.socket !== undefined) return values.socket;
  if (values.store !== undefined) {
    const problem = storeNameProblem(values.store);
    if (problem !== undefined) throw new UsageError(`--store ${problem}`);
    return socketPathFor(null, values.store, await resolveRuntimeDir(env));
  }
  const fromEnv = env[SOCKET_ENV];
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  throw new UsageError(`--socket PATH, --store NAME or ${SOCKET_ENV} is required`);
}

/**
 * Connects, runs `use` with the client, and closes. A refusal prints
 * `skein-store: CODE: message` on stderr and gives 1, so scripts can switch on the code.
 */
export async function withClient(
  io: Io,
  values: ConnectionValues,
  use: (client: StoreClient) => Promise<number>,
): Promise<number> {
  const socket = await socketOf(values);
  const timeoutMs = values["timeout-ms"] === undefined ? 30_000 : Number(values["timeout-ms"]);
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) {
    throw new UsageError("--timeout-ms must be a positive whole number");
  }
  let client: StoreClient | undefined;
  try {
    const pass = await passOf(values["pass-file"]);
    client = await StoreClient.connect(socket, {
      client: "skein-store-cli",
      timeoutMs,
      ...(pass === undefined ? {} : { pass }),
    });
    return await use(client);
  } catch (error) {
    if (error instanceof SkeinError) io.err(`skein-store: ${error.code}: ${error.message}`);
    else io.err(`skein-store: cannot reach the store at ${socket}: ${(error as Error).message}`);
    return 1;
  } finally {
    await client?.close();
  }
}

/** The pass from `--pass-file` (read by the credential-file rules), else from the environment. */
async function passOf(file: string | undefined): Promise<string | undefined> {
  if (file !== undefined) return readCredentialFile("--pass-file", resolve(file));
  const env = process.env[PASS_ENV];
  return env === undefined || env === "" ? undefined : env;
}
