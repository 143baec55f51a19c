/**
 * Reading the workflow server's configuration: the TOML file is parsed with integers as
 * bigint (so a float in an integer key is refused as not whole), decoded once with the
 * schema, and its paths resolved: `data_dir` against the file's directory, the SQLite path
 * under `data_dir`. `ensureConfigFile` writes the first-run template when the file is absent.
 */

import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, isAbsolute, resolve } from "node:path";
import { parse } from "smol-toml";
import { DecodeError, LosslessNumber } from "../../common/decode/index.ts";
import type { SkeinError } from "../../common/errors.ts";
import { writeFileAtomic } from "../../common/files.ts";
import { workflowError } from "../errors.ts";
import { type ConfigFile, configDecoder } from "./schema.ts";
import { FIRST_RUN_TEMPLATE } from "./template.ts";

export const DEFAULT_CONFIG_FILE = "skein.toml";

export type StorageTarget =
  | { readonly kind: "sqlite"; readonly path: string }
  | {
      readonly kind: "postgres";
      readonly url: string;
      readonly schema: string;
      readonly poolSize: number;
    };

export interface ServerConfig {
  /** Absolute path of the configuration file. */
  readonly file: string;
  /** Absolute data directory. */
  readonly dataDir: string;
  readonly storage: StorageTarget;
  readonly nodeId: string;
  /** Every key as decoded, defaults applied. */
  readonly settings: ConfigFile;
}

/** Writes the first-run template when `file` does not exist; true when it wrote it. */
export async function ensureConfigFile(file: string): Promise<boolean> {
  if (existsSync(file)) return false;
  try {
    // Atomic: a start that fails mid-write leaves no half template to be refused later.
    await writeFileAtomic(file, FIRST_RUN_TEMPLATE, { mode: 0o644 });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw workflowError("config_invalid", `${file}: cannot write the first-run template`, error);
  }
}

export async function loadConfig(path: string): Promise<ServerConfig> {
  const file = resolve(path);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw workflowError("config_invalid", `${file}: cannot read (${reason})`, error);
  }
  return parseConfig(text, file);
}

/** Parses and decodes configuration text; `file` resolves relative paths and names refusals. */
export function parseConfig(text: string, file: string): ServerConfig {
  let raw: unknown;
  try {
    raw = floatsAsWritten(parse(text, { integersAsBigInt: true }));
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw workflowError("config_invalid", `${file}: not valid TOML: ${reason}`, error);
  }
  let settings: ConfigFile;
  try {
    settings = configDecoder.run(raw, undefined);
  } catch (error) {
    if (error instanceof DecodeError) throw refusal(file, error);
    throw error;
  }
  const dataDir = resolve(dirname(file), settings.data_dir);
  const url = settings.storage.url ?? "sqlite:skein.db";
  let storage: StorageTarget;
  if (url.startsWith("sqlite:")) {
    const path = url.slice("sqlite:".length);
    storage = { kind: "sqlite", path: isAbsolute(path) ? path : resolve(dataDir, path) };
  } else {
    const { schema, pool_size: poolSize } = settings.storage;
    storage = { kind: "postgres", url, schema, poolSize };
  }
  return {
    file,
    dataDir,
    storage,
    nodeId: settings.cluster.node_id ?? hostname(),
    settings,
  };
}

/**
 * TOML integers arrive as bigint; TOML floats as JS numbers, which the decoding core would
 * take as integers when whole (`10.0` is the number 10). Floats are handed over as number
 * text that keeps their float form, so integer keys refuse them as not whole.
 */
function floatsAsWritten(value: unknown): unknown {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return value;
    const text = String(value);
    return new LosslessNumber(/[.eE]/.test(text) ? text : `${text}.0`);
  }
  if (Array.isArray(value)) return value.map(floatsAsWritten);
  if (typeof value === "object" && value !== null && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    // defineProperty: a key such as `__proto__` stays a key, never a prototype.
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, k, {
        value: floatsAsWritten(v),
        enumerable: true,
        writable: true,
      });
    }
    return out;
  }
  return value;
}

/** A config refusal names the file and keeps the field path and code of the decode refusal. */
function refusal(file: string, error: DecodeError): SkeinError {
  const wrapped = workflowError("config_invalid", `${file}: ${error.message}`, error);
  return Object.assign(wrapped, { field: error.field });
}
