/**
 * `serve`'s start-up, in two phases so that a refusal leaves nothing on disk. `planStartup`
 * runs every check (data directory, `create` section, store name, runtime directory,
 * socket path and its parent, name lock, placement credential) without writing anything.
 * `commitStartup` then creates what the plan needs: the runtime directory, the name lock,
 * the store directory for `--create`, and removes a stale socket file. The result is the
 * `StoreStartup` the listener is given.
 */

import { basename } from "node:path";
import { readCredentialFile } from "../config/files.ts";
import { storeNameProblem } from "../config/store-name.ts";
import type { StoreServiceConfig } from "../config/types.ts";
import { CREATE_SECTION_REQUIRED, INVALID_STORE_NAME, startupRefusal } from "../errors.ts";
import {
  createDataDir,
  planExistingDataDir,
  planNewDataDir,
  removeCreatedDataDir,
} from "./data-dir.ts";
import { acquireNameLock, checkNameFree, type NameLock } from "./name-lock.ts";
import { ensureRuntimeDir, type RuntimeDir, resolveRuntimeDir } from "./runtime-dir.ts";
import { planSocket, removeSocket, type SocketPlan } from "./socket-path.ts";

/** What the listener and the engine are started with. */
export interface StoreStartup {
  readonly config: StoreServiceConfig;
  /** The canonical data directory (symbolic links in its parent resolved). */
  readonly dataDir: string;
  /** The configured name, or the basename of the canonical data directory. */
  readonly name: string;
  readonly socketPath: string;
  /** True when this start created the store (`serve --create`). */
  readonly created: boolean;
  /** The app credential from `idp.placement_credential_file`, read once; null without it. */
  readonly placementCredential: string | null;
}

export interface StartupPlan {
  readonly startup: StoreStartup;
  readonly runtime: RuntimeDir;
  readonly socket: SocketPlan;
}

export interface StartupOptions {
  readonly create: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Every start-up check, in the order a user fixes them; creates nothing. */
export async function planStartup(
  config: StoreServiceConfig,
  options: StartupOptions,
): Promise<StartupPlan> {
  if (options.create && config.create === null) {
    throw startupRefusal(CREATE_SECTION_REQUIRED, "create", "--create needs a create section");
  }
  const dataDir = options.create
    ? await planNewDataDir(config.data_dir)
    : await planExistingDataDir(config.data_dir);
  const name = config.name ?? basename(dataDir);
  const problem = storeNameProblem(name);
  if (problem !== undefined) {
    throw startupRefusal(
      INVALID_STORE_NAME,
      "name",
      `the default name ${JSON.stringify(name)} (the data directory's basename) ${problem}`,
    );
  }
  const runtime = await resolveRuntimeDir(options.env);
  // The name first: a second `serve` of a live store is told the name is taken, not that
  // its socket answers.
  if (runtime.exists) await checkNameFree(runtime.path, name);
  const socket = await planSocket(config.socket, name, runtime);
  const file = config.idp?.placement_credential_file ?? null;
  const placementCredential =
    file === null ? null : await readCredentialFile("idp.placement_credential_file", file);
  return {
    startup: {
      config,
      dataDir,
      name,
      socketPath: socket.path,
      created: options.create,
      placementCredential,
    },
    runtime,
    socket,
  };
}

export interface CommittedStartup {
  readonly startup: StoreStartup;
  readonly lock: NameLock;
  /** Undoes the commit: removes a store created by this start and releases the lock. */
  rollback(): Promise<void>;
}

/** Creates what the plan needs; on failure undoes what it created and rethrows. */
export async function commitStartup(plan: StartupPlan): Promise<CommittedStartup> {
  const { startup } = plan;
  await ensureRuntimeDir(plan.runtime);
  const lock = await acquireNameLock(plan.runtime.path, startup.name);
  let created = false;
  try {
    if (startup.created && startup.config.create !== null) {
      await createDataDir(startup.dataDir, startup.config.create);
      created = true;
    }
    if (plan.socket.stale) await removeSocket(plan.socket.path);
  } catch (error) {
    if (created) await removeCreatedDataDir(startup.dataDir);
    await lock.release();
    throw error;
  }
  return {
    startup,
    lock,
    async rollback() {
      if (created) await removeCreatedDataDir(startup.dataDir);
      await lock.release();
    },
  };
}
