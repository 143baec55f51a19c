/**
 * The data directory. `serve --create` needs an existing parent and a new final directory,
 * and writes the store manifest there; plain `serve` needs a directory that already holds a
 * store (its manifest). The canonical path (symbolic links in the parent resolved) is what
 * the default store name is taken from. Failures are `invalid_data_dir`.
 */

import { randomBytes } from "node:crypto";
import { lstat, mkdir, readFile, realpath, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { SkeinError } from "../../common/errors.ts";
import { createStore } from "../engine/open.ts";
import { INVALID_DATA_DIR, startupRefusal } from "../errors.ts";

/** The file that marks a directory as a store; written once by `serve --create`. */
export const STORE_MANIFEST = "skein-store.json";
export const STORE_FORMAT = "skein-store";
export const STORE_FORMAT_VERSION = 1;

export interface StoreManifest {
  readonly format: typeof STORE_FORMAT;
  readonly version: number;
  readonly created_at: string;
  /** The `create` object's values, as decimal strings (they are u64-sized). */
  readonly shards: string;
  readonly cache_bytes_total: string;
  readonly executor_threads: string;
}

const FIELD = "data_dir";

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/** For `--create`: the canonical path of the new directory; nothing is created here. */
export async function planNewDataDir(dataDir: string): Promise<string> {
  const normal = resolve(dataDir);
  const name = basename(normal);
  if (name === "") throw startupRefusal(INVALID_DATA_DIR, FIELD, "must name a new directory");
  const parent = dirname(normal);
  let canonicalParent: string;
  try {
    canonicalParent = await realpath(parent);
    if (!(await stat(canonicalParent)).isDirectory()) {
      throw startupRefusal(INVALID_DATA_DIR, FIELD, `parent ${parent} is not a directory`);
    }
  } catch (error) {
    if (error instanceof SkeinError) throw error;
    throw startupRefusal(
      INVALID_DATA_DIR,
      FIELD,
      `parent ${parent} does not exist or cannot be resolved (${errnoCode(error)})`,
    );
  }
  const target = join(canonicalParent, name);
  try {
    await lstat(target);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return target;
    throw startupRefusal(INVALID_DATA_DIR, FIELD, `${normal} cannot be inspected`);
  }
  throw startupRefusal(
    INVALID_DATA_DIR,
    FIELD,
    `${normal} already exists; --create needs a new directory (omit --create to open a store)`,
  );
}

/** Without `--create`: the canonical path of an existing store. */
export async function planExistingDataDir(dataDir: string): Promise<string> {
  let canonical: string;
  try {
    canonical = await realpath(dataDir);
  } catch (error) {
    const hint = errnoCode(error) === "ENOENT" ? "; use serve --create to create a store" : "";
    throw startupRefusal(
      INVALID_DATA_DIR,
      FIELD,
      `${dataDir} cannot be resolved (${errnoCode(error)})${hint}`,
    );
  }
  if (!(await stat(canonical)).isDirectory()) {
    throw startupRefusal(INVALID_DATA_DIR, FIELD, `${dataDir} is not a directory`);
  }
  const manifest = await readManifest(canonical);
  if (manifest === undefined) {
    throw startupRefusal(
      INVALID_DATA_DIR,
      FIELD,
      `${dataDir} is not a store (no ${STORE_MANIFEST}); use serve --create to create one`,
    );
  }
  return canonical;
}

/** Reads the store manifest, or undefined when the directory holds no valid one. */
export async function readManifest(dir: string): Promise<StoreManifest | undefined> {
  try {
    const parsed = JSON.parse(await readFile(join(dir, STORE_MANIFEST), "utf8")) as StoreManifest;
    if (parsed.format !== STORE_FORMAT || typeof parsed.version !== "number") return undefined;
    return parsed;
  } catch {
    return undefined;
  }
}

export interface CreateValues {
  readonly shards: bigint;
  readonly cache_bytes_total: bigint;
  readonly executor_threads: bigint;
}

/**
 * Creates the store directory (mode 0700), the engine's database in it, then its manifest.
 * The directory must not exist: `mkdir` without `recursive` makes a concurrent `--create`
 * of the same path lose cleanly. The manifest is written last, so a directory that has one
 * holds a complete store.
 */
export async function createDataDir(canonical: string, create: CreateValues): Promise<void> {
  try {
    await mkdir(canonical, { mode: 0o700 });
  } catch (error) {
    throw startupRefusal(
      INVALID_DATA_DIR,
      FIELD,
      `${canonical} cannot be created (${errnoCode(error)})`,
    );
  }
  await createStore(canonical, {
    shards: create.shards,
    cacheBytesTotal: create.cache_bytes_total,
    executorThreads: create.executor_threads,
  });
  const manifest: StoreManifest = {
    format: STORE_FORMAT,
    version: STORE_FORMAT_VERSION,
    created_at: new Date().toISOString(),
    shards: create.shards.toString(),
    cache_bytes_total: create.cache_bytes_total.toString(),
    executor_threads: create.executor_threads.toString(),
  };
  const temp = join(canonical, `.${STORE_MANIFEST}.${randomBytes(6).toString("hex")}`);
  await writeFile(temp, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, join(canonical, STORE_MANIFEST));
}

/** Undoes `createDataDir` when start-up fails after it. */
export async function removeCreatedDataDir(canonical: string): Promise<void> {
  await rm(canonical, { recursive: true, force: true });
}
