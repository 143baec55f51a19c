/**
 * The data directory: `idp.db` (SQLite) and `keys.json` (signing and cookie keys). The
 * directory is created owner-only (0700) and refused when others can read it; `keys.json`
 * is created on first start with mode 0600, written atomically (temporary file, fsync,
 * rename, fsync of the directory) so a crash never leaves half a key file, and refused when
 * its mode lets others read it. Messages name the files, never their contents.
 */

import { randomBytes } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import { idpError } from "./errors.ts";

export const SIGNING_ALG = "ES256";

export interface KeyFile {
  /** Private signing keys (JWK with kid, alg, use); the first signs. */
  readonly signing: JWK[];
  /** Keys for oidc-provider's signed cookies. */
  readonly cookies: string[];
}

export function dbFile(dataDir: string): string {
  return join(dataDir, "idp.db");
}

function keysFile(dataDir: string): string {
  return join(dataDir, "keys.json");
}

/** Creates the directory 0700 if missing; refuses one others may read or write. */
export function ensureDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw idpError("data_dir_unusable", `cannot create ${dataDir}`, error);
  }
  const stat = statSync(dataDir);
  if (!stat.isDirectory()) throw idpError("data_dir_unusable", `${dataDir} is not a directory`);
  if ((stat.mode & 0o077) !== 0) {
    throw idpError(
      "data_dir_unusable",
      `${dataDir} must be accessible by its owner only (mode 0700); it is ${(stat.mode & 0o777).toString(8)}`,
    );
  }
}

/** Loads keys.json, generating it on first start. */
export async function loadOrCreateKeys(dataDir: string): Promise<KeyFile> {
  const file = keysFile(dataDir);
  let stat: ReturnType<typeof statSync> | undefined;
  try {
    stat = statSync(file);
  } catch {
    stat = undefined;
  }
  if (stat === undefined) {
    const keys = await generateKeys();
    writeAtomically(dataDir, file, `${JSON.stringify(keys)}\n`);
    return keys;
  }
  if ((stat.mode & 0o077) !== 0) {
    throw idpError("keys_unusable", `${file} must have mode 0600`);
  }
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as KeyFile;
    if (!Array.isArray(parsed.signing) || parsed.signing.length === 0) throw new Error("shape");
    if (!Array.isArray(parsed.cookies) || parsed.cookies.length === 0) throw new Error("shape");
    return parsed;
  } catch {
    throw idpError("keys_unusable", `${file} is not a valid key file`);
  }
}

async function generateKeys(): Promise<KeyFile> {
  const { privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = randomBytes(12).toString("base64url");
  return {
    signing: [{ ...jwk, kid, alg: SIGNING_ALG, use: "sig" }],
    cookies: [randomBytes(32).toString("base64url")],
  };
}

function writeAtomically(dir: string, file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  const fd = openSync(temporary, "wx", 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
  const dirFd = openSync(dir, "r");
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}
