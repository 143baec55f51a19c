/**
 * The server's Ed25519 signing key: generated on first start into the data directory as a
 * PKCS#8 PEM file readable only by its owner (mode 0600), written atomically (a failed start
 * leaves no file), loaded on every later start and by `skein token issue`. Bearer tokens are signed with it; the public half verifies them.
 */

import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../common/files.ts";
import { workflowError } from "../errors.ts";

export const SIGNING_KEY_FILE = "signing-key.pem";

export interface SigningKey {
  readonly path: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

export function signingKeyPath(dataDir: string): string {
  return join(dataDir, SIGNING_KEY_FILE);
}

/** Loads the key, generating it first when absent; `created` says which happened. */
export async function ensureSigningKey(
  dataDir: string,
): Promise<{ key: SigningKey; created: boolean }> {
  const path = signingKeyPath(dataDir);
  const size = await sizeOf(path);
  // An empty file is what a failed first start of an older build left: no token was ever
  // signed with it, so it is replaced rather than refused.
  if (size === undefined || size === 0) {
    const { privateKey } = generateKeyPairSync("ed25519");
    const pem = privateKey.export({ type: "pkcs8", format: "pem" });
    try {
      // Without `replace`: never overwrite a key another start wrote meanwhile; tokens it
      // signed stay valid. Atomic: a failed write leaves no file, so the next start works.
      await writeFileAtomic(path, pem, { mode: 0o600, replace: size === 0 });
      return { key: { path, privateKey, publicKey: createPublicKey(privateKey) }, created: true };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        throw workflowError("storage_unavailable", `cannot write the signing key ${path}`, error);
      }
    }
  }
  return { key: await loadSigningKey(dataDir), created: false };
}

/** Loads an existing key; refuses with a hint when the server never started here. */
export async function loadSigningKey(dataDir: string): Promise<SigningKey> {
  const path = signingKeyPath(dataDir);
  let pem: string;
  try {
    pem = await readFile(path, "utf8");
  } catch (error) {
    throw workflowError(
      "config_invalid",
      `no signing key at ${path}: start \`skein serve\` once with this configuration`,
      error,
    );
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (error) {
    throw workflowError("config_invalid", `${path} is not a PEM private key`, error);
  }
  if (privateKey.asymmetricKeyType !== "ed25519") {
    throw workflowError("config_invalid", `${path} is not an Ed25519 private key`);
  }
  return { path, privateKey, publicKey: createPublicKey(privateKey) };
}

/** The size of the file at `path`, or undefined when there is none. */
export async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}
